// Pure functions from hub objects to what the pages show. They follow
// pkg/fleetview (the view `kubectl hcpfleet status` shows) and
// api/v1alpha1/phase.go so that the console and the CLI agree; the names
// below are the Go constants they mirror.

export interface Condition {
  type: string;
  // True, False or Unknown.
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  deletionTimestamp?: string;
}

export interface HCD {
  metadata: Meta;
  spec?: {
    deletionPolicy?: string;
    placement?: string;
    nodePools?: NodePoolTemplate[];
    hostedCluster?: { spec?: { release?: { image?: string } } };
  };
  status?: {
    hostingCluster?: string;
    conditions?: Condition[];
    version?: {
      current?: string;
      desired?: { version?: string; image?: string };
      availableUpdates?: Release[];
      conditionalUpdates?: ConditionalUpdate[];
    };
    kubeconfigSecret?: { name: string; key?: string };
    managedCluster?: string;
    nodePools?: { name: string; replicas: number; readyReplicas: number }[];
  };
}

// Release, ConditionalUpdate: api/v1alpha1 ReleaseStatus and
// ConditionalUpdate (HyperShift's, carried by the agent).
export interface Release {
  version?: string;
  image?: string;
}
export interface ConditionalUpdate {
  release: Release;
  recommended?: string;
  reason?: string;
  message?: string;
  risks?: { name: string; message?: string }[];
}

// NodePoolTemplate is the part of spec.nodePools[] the console reads and
// scales (api/v1alpha1 NodePoolTemplate; spec is HyperShift's NodePoolSpec).
export interface NodePoolTemplate {
  name: string;
  spec?: { replicas?: number; autoScaling?: { min?: number; max?: number } };
}

export interface ManagedCluster {
  metadata: Meta;
  spec?: { taints?: { key: string; effect?: string; value?: string }[] };
  status?: { conditions?: Condition[]; clusterClaims?: { name: string; value: string }[] };
}

export interface ManagedClusterAddOn {
  metadata: Meta;
  status?: { conditions?: Condition[] };
}

export interface AddOnPlacementScore {
  metadata: Meta;
  status?: { scores?: { name: string; value: number }[] };
}

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
const isTrue = (conds: Condition[] | undefined, type: string) => findCondition(conds, type)?.status === 'True';

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
export const good = (c: Condition): boolean => (c.status === 'True') === !healthyWhenFalse.has(c.type);

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

export interface Host {
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
}

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

// K8sEvent is a core/v1 Event, as the hub's controllers record them
// (controller-runtime's recorder, source hcdstatus.EventSource).
export interface K8sEvent {
  metadata: Meta;
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  source?: { component?: string };
  reportingComponent?: string;
  involvedObject?: { kind?: string; name?: string; uid?: string };
}

// eventFieldSelector selects the Events about one HostedClusterDeployment;
// with its UID, not those of a deleted one of the same name.
export const eventFieldSelector = (hcd: HCD): string =>
  [
    'involvedObject.kind=HostedClusterDeployment',
    `involvedObject.name=${hcd.metadata.name ?? ''}`,
    ...(hcd.metadata.uid ? [`involvedObject.uid=${hcd.metadata.uid}`] : []),
  ].join(',');

export const eventTime = (e: K8sEvent): string => e.lastTimestamp || e.eventTime || e.firstTimestamp || '';

// sortEvents puts the newest first.
export const sortEvents = (events: K8sEvent[]): K8sEvent[] =>
  [...events].sort((a, b) => eventTime(b).localeCompare(eventTime(a)));

export interface NodePoolRow {
  name: string;
  // index in spec.nodePools, -1 for a pool only the status knows.
  index: number;
  // desired is spec.replicas; undefined when the pool autoscales.
  desired?: number;
  autoscaling?: { min?: number; max?: number };
  replicas: number;
  ready: number;
}

// nodePoolRows joins the pools the spec asks for with what the status
// reports of them, in the spec's order.
export const nodePoolRows = (hcd: HCD): NodePoolRow[] => {
  const status = hcd.status?.nodePools ?? [];
  const of = (name: string) => status.find((p) => p.name === name);
  const rows: NodePoolRow[] = (hcd.spec?.nodePools ?? []).map((p, index) => ({
    name: p.name,
    index,
    desired: p.spec?.autoScaling ? undefined : p.spec?.replicas,
    autoscaling: p.spec?.autoScaling,
    replicas: of(p.name)?.replicas ?? 0,
    ready: of(p.name)?.readyReplicas ?? 0,
  }));
  for (const p of status) {
    if (!rows.some((r) => r.name === p.name)) {
      rows.push({ name: p.name, index: -1, replicas: p.replicas ?? 0, ready: p.readyReplicas ?? 0 });
    }
  }
  return rows;
};

export interface JSONPatchOp {
  op: 'test' | 'add' | 'replace';
  path: string;
  value: unknown;
}

// scalePatch sets one node pool's replicas, as the user: a JSON patch whose
// test op fails the request if spec.nodePools changed order under the page,
// instead of scaling another pool. Whether the user may scale, and to
// what, is the API server's to say (RBAC, the CRD's validation).
export const scalePatch = (row: NodePoolRow, replicas: number): JSONPatchOp[] => [
  { op: 'test', path: `/spec/nodePools/${row.index}/name`, value: row.name },
  { op: 'add', path: `/spec/nodePools/${row.index}/spec/replicas`, value: replicas },
];

// parseReplicas accepts a whole number of nodes, or returns undefined.
export const parseReplicas = (text: string): number | undefined => {
  if (!/^\d{1,6}$/.test(text.trim())) return undefined;
  return Number(text.trim());
};

// ReleaseRollout (api/v1alpha1/releaserollout_types.go), the part shown.
export interface ReleaseRollout {
  metadata: Meta;
  spec?: { release?: { image?: string }; paused?: boolean; abort?: boolean };
  status?: {
    observedGeneration?: number;
    conditions?: Condition[];
    wave?: number;
    waves?: number;
    selected?: number;
    pending?: number;
    upgrading?: number;
    done?: number;
    blocked?: number;
    failed?: number;
    hostedClusters?: { name: string; wave: number; state: string; reason?: string; message?: string }[];
  };
}

// HostedClusterExtension (api/v1alpha1/hostedclusterextension_types.go),
// the part shown.
export interface HostedClusterExtension {
  metadata: Meta;
  spec?: { strategy?: { type?: string; paused?: boolean } };
  status?: {
    conditions?: Condition[];
    revision?: number;
    selected?: number;
    updated?: number;
    available?: number;
    failed?: number;
    hostedClusters?: {
      name: string;
      hostingCluster?: string;
      revision?: number;
      state?: string;
      currentPhase?: string;
      failure?: { message?: string };
    }[];
  };
}

export interface Progress {
  value: number;
  of: number;
  state: string;
  reason: string;
  message: string;
}

// rolloutProgress: done of selected, and the state the RolloutCompleted and
// RolloutProgressing conditions give (their reasons: Completed, Paused,
// Aborted, WaveFailed, InvalidRollout, WaveInProgress), "Pending" until
// the hub has written a status.
export const rolloutProgress = (rr: ReleaseRollout): Progress => {
  const s = rr.status ?? {};
  const completed = findCondition(s.conditions, 'RolloutCompleted');
  const progressing = findCondition(s.conditions, 'RolloutProgressing');
  const c = completed?.status === 'True' ? completed : progressing;
  return {
    value: s.done ?? 0,
    of: s.selected ?? 0,
    state: c ? c.reason || c.type : 'Pending',
    reason: c?.reason ?? '',
    message: c?.message ?? '',
  };
};

// extensionProgress: available of selected, and the state the Degraded,
// Progressing and Available conditions give, in that order.
export const extensionProgress = (hce: HostedClusterExtension): Progress => {
  const s = hce.status ?? {};
  const conds = s.conditions;
  const c =
    [findCondition(conds, 'Degraded'), findCondition(conds, 'Progressing'), findCondition(conds, 'Available')].find(
      (x) => x?.status === 'True',
    ) ?? findCondition(conds, 'Available');
  return {
    value: s.available ?? 0,
    of: s.selected ?? 0,
    state: c ? (c.status === 'True' ? c.type : `Not ${c.type}`) : 'Pending',
    reason: c?.reason ?? '',
    message: c?.message ?? '',
  };
};

// percent of a progress, 0 when nothing is selected.
export const percent = (p: Progress): number => (p.of > 0 ? Math.round((100 * p.value) / p.of) : 0);
