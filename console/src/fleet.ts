// Pure functions from hub objects to what the pages show. They follow
// pkg/fleetview (the view `kubectl hcpfleet status` shows) and
// api/v1alpha1/phase.go so that the console and the CLI agree; the names
// below are the Go constants they mirror.

export type Condition = {
  type: string;
  status: 'True' | 'False' | 'Unknown' | string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
};

export type Meta = {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  deletionTimestamp?: string;
};

export type HCD = {
  metadata: Meta;
  spec?: { deletionPolicy?: string; placement?: string };
  status?: {
    hostingCluster?: string;
    conditions?: Condition[];
    version?: { current?: string; desired?: { version?: string; image?: string } };
    kubeconfigSecret?: { name: string; key?: string };
    managedCluster?: string;
    nodePools?: { name: string; replicas: number; readyReplicas: number }[];
  };
};

export type ManagedCluster = {
  metadata: Meta;
  spec?: { taints?: { key: string; effect?: string; value?: string }[] };
  status?: { conditions?: Condition[]; clusterClaims?: { name: string; value: string }[] };
};

export type ManagedClusterAddOn = {
  metadata: Meta;
  status?: { conditions?: Condition[] };
};

export type AddOnPlacementScore = {
  metadata: Meta;
  status?: { scores?: { name: string; value: number }[] };
};

// pkg/addon.Name: the add-on, and the AddOnPlacementScore the agent writes.
export const addOnName = 'hcp-fleet';
// pkg/hosting.LabelHCDName: marks a ManagedCluster hcp-fleet imported (a
// hosted cluster, not a management cluster).
export const labelHCDName = 'hcpfleet.io/hcd-name';
// pkg/hosting.TaintUnschedulable: `kubectl hcpfleet cordon`.
export const taintUnschedulable = 'hcpfleet.io/unschedulable';
// pkg/hosting cluster claims.
export const claimHostedClusters = 'hostedclusters.hostingcluster.hcpfleet.io';
export const claimCapacity = 'capacity.hostingcluster.hcpfleet.io';
export const claimCapacityBasis = 'capacity-basis.hostingcluster.hcpfleet.io';
export const claimPlatforms = 'platforms.hostingcluster.hcpfleet.io';
export const claimVersions = 'supported-versions.hostingcluster.hcpfleet.io';

export const findCondition = (conds: Condition[] | undefined, type: string) =>
  (conds ?? []).find((c) => c.type === type);
const isTrue = (conds: Condition[] | undefined, type: string) =>
  findCondition(conds, type)?.status === 'True';

// phase is HostedClusterDeployment.Phase (api/v1alpha1/phase.go).
export const phase = (hcd: HCD): string => {
  const conds = hcd.status?.conditions;
  if (hcd.metadata.deletionTimestamp) {
    return hcd.spec?.deletionPolicy === 'Orphan' ? 'Orphaning' : 'Deleting';
  }
  if (!hcd.status?.hostingCluster) return 'Pending';
  if (!isTrue(conds, 'Delivered')) return 'Delivering';
  if (isTrue(conds, 'Degraded')) return 'Degraded';
  if (isTrue(conds, 'Available') && isTrue(conds, 'Progressing')) return 'Upgrading';
  if (isTrue(conds, 'Available')) return 'Available';
  return 'Progressing';
};

// version is the current version, "→ desired" while a rollout is under way
// (fleetview.DeploymentOf).
export const version = (hcd: HCD): string => {
  const v = hcd.status?.version;
  if (!v) return '';
  const desired = v.desired?.version ?? '';
  if (desired && desired !== v.current) return `${v.current ?? ''} → ${desired}`.trim();
  return v.current ?? '';
};

// Conditions whose healthy status is False (fleetview.keyConditions).
const healthyWhenFalse = new Set(['Progressing', 'Degraded', 'UpgradeBlocked']);

// good says whether a condition is in its healthy state.
export const good = (c: Condition): boolean =>
  (c.status === 'True') === !healthyWhenFalse.has(c.type);

// problem is the first condition (other than Progressing) that is not as
// wanted, "Type Reason: message" (fleetview.DeploymentOf), or "".
export const problem = (hcd: HCD): string => {
  for (const c of hcd.status?.conditions ?? []) {
    if (c.type !== 'Progressing' && c.status !== 'Unknown' && !good(c)) {
      return `${c.type} ${c.reason ?? ''}: ${c.message ?? ''}`;
    }
  }
  return '';
};

export type Host = {
  name: string;
  available: string;
  cordoned: boolean;
  addOn: string;
  operator: string;
  hosted: string;
  // capacity is the agent's capacity claim; the scheduler may take less
  // (a HostingConfig's maxHostedClusters), which only the hub computes.
  capacity: string;
  capacityBasis: string;
  freeScore: string;
  platforms: string;
  versions: string;
  // deployments are the HostedClusterDeployments bound to it that the
  // reader may see.
  deployments: string[];
};

// addOnState follows fleetview.addOnState.
export const addOnState = (mca?: ManagedClusterAddOn): { addOn: string; operator: string } => {
  if (!mca) return { addOn: '-', operator: '-' };
  const conds = mca.status?.conditions;
  let addOn = 'Unavailable';
  if (mca.metadata.deletionTimestamp) {
    addOn = 'Deleting';
    const c = findCondition(conds, 'Cleanup');
    if (c && c.status !== 'True') addOn = `Deleting (${c.reason ?? ''})`;
  } else if (isTrue(conds, 'Available')) {
    addOn = 'Available';
  }
  let operator = findCondition(conds, 'HyperShiftOperatorInstalled')?.reason ?? '-';
  const degraded = findCondition(conds, 'HyperShiftOperatorDegraded');
  if (degraded?.status === 'True') operator += `, Degraded: ${degraded.reason ?? ''}`;
  return { addOn, operator };
};

// hosts are the management clusters (ManagedClusters hcp-fleet did not
// import), sorted by name, joined with the add-on, score and deployments.
export const hosts = (
  clusters: ManagedCluster[],
  addOns: ManagedClusterAddOn[],
  scores: AddOnPlacementScore[],
  hcds: HCD[],
): Host[] =>
  clusters
    .filter((mc) => !mc.metadata.labels?.[labelHCDName])
    .map((mc) => {
      const name = mc.metadata.name ?? '';
      const claim = (n: string) => mc.status?.clusterClaims?.find((c) => c.name === n)?.value ?? '';
      const mca = addOns.find((a) => a.metadata.namespace === name && a.metadata.name === addOnName);
      const score = scores.find((s) => s.metadata.namespace === name && s.metadata.name === addOnName);
      const free = score?.status?.scores?.find((s) => s.name === 'freeCapacity');
      return {
        name,
        available: findCondition(mc.status?.conditions, 'ManagedClusterConditionAvailable')?.status ?? 'Unknown',
        cordoned: (mc.spec?.taints ?? []).some((t) => t.key === taintUnschedulable),
        ...addOnState(mca),
        hosted: claim(claimHostedClusters) || '-',
        capacity: claim(claimCapacity) || '-',
        capacityBasis: claim(claimCapacityBasis),
        freeScore: free ? String(free.value) : '-',
        platforms: claim(claimPlatforms) || '-',
        versions: claim(claimVersions) || '-',
        deployments: hcds
          .filter((h) => h.status?.hostingCluster === name)
          .map((h) => `${h.metadata.namespace}/${h.metadata.name}`)
          .sort(),
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
