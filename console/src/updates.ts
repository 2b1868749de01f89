// Available updates of a HostedClusterDeployment and the upgrade the page
// offers. What the hosted cluster may go to is HyperShift's (status.version
// availableUpdates and conditionalUpdates, carried to the hub by the
// agent); whether the hub lists the release is the hub's (a ClusterImageSet
// publishes it: fleetview.UpdatesOf, in the hub's explanation, since a
// tenant may not list ClusterImageSets); whether the user may upgrade, and
// to what, is the API server's and the namespace's TenantPolicy's.
import type { HCD, JSONPatchOp } from './fleet';
import type { Explanation } from './explain';

export interface UpdateRow {
  version: string;
  image: string;
  // recommended: an available update; false for a conditional update the
  // update service knows risks for (risks names them).
  recommended: boolean;
  risks: string[];
  // published: a ClusterImageSet on the hub publishes it; undefined while
  // the hub has not said (or could not read its ClusterImageSets).
  published?: boolean;
}

export const updateRows = (hcd: HCD, updates?: Explanation['Updates']): UpdateRow[] => {
  const v = hcd.status?.version;
  const known = !!updates && !updates.imageSetsUnknown;
  const published = (version: string) => (known ? (updates?.mayGoTo ?? []).includes(version) : undefined);
  const rows: UpdateRow[] = (v?.availableUpdates ?? [])
    .filter((r) => r.version && r.image)
    .map((r) => ({
      version: r.version ?? '',
      image: r.image ?? '',
      recommended: true,
      risks: [],
      published: published(r.version ?? ''),
    }));
  for (const cu of v?.conditionalUpdates ?? []) {
    if (cu.recommended === 'True' || !cu.release?.version || rows.some((r) => r.version === cu.release.version))
      continue;
    const risks = (cu.risks ?? []).map((r) => r.name);
    rows.push({
      version: cu.release.version,
      image: cu.release.image ?? '',
      recommended: false,
      risks: risks.length ? risks : [cu.reason ?? 'not recommended'],
      // The hub lists only recommended updates as ones to go to.
      published: undefined,
    });
  }
  return rows;
};

// canUpgrade: the page offers an upgrade only to a recommended update the
// hub lists. A conditional update needs its risks accepted by name, which
// a ReleaseRollout does (spec.acceptRisks), not this page.
export const canUpgrade = (row: UpdateRow): boolean => row.recommended && row.published === true && !!row.image;

// upgradePatch moves the control plane's release to image, as the user:
// the test op fails the request if the release changed under the page.
// The node pools keep theirs (HyperShift upgrades them on their own, never
// ahead of the control plane).
export const upgradePatch = (hcd: HCD, image: string): JSONPatchOp[] => [
  { op: 'test', path: '/spec/hostedCluster/spec/release/image', value: hcd.spec?.hostedCluster?.spec?.release?.image },
  { op: 'replace', path: '/spec/hostedCluster/spec/release/image', value: image },
];
