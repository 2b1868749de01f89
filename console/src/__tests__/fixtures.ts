// Hub objects as the API server returns them, for the unit tests.
import type {
  HCD,
  HostedClusterExtension,
  K8sEvent,
  ManagedCluster,
  ManagedClusterAddOn,
  AddOnPlacementScore,
  ReleaseRollout,
} from '../fleet';

export const cluster = (name: string, extra: Partial<ManagedCluster> = {}): ManagedCluster => ({
  metadata: { name },
  status: {
    conditions: [{ type: 'ManagedClusterConditionAvailable', status: 'True' }],
    clusterClaims: [
      { name: 'hostedclusters.hostingcluster.hcpfleet.io', value: '1' },
      { name: 'capacity.hostingcluster.hcpfleet.io', value: '10' },
      { name: 'platforms.hostingcluster.hcpfleet.io', value: 'None,KubeVirt' },
      { name: 'supported-versions.hostingcluster.hcpfleet.io', value: '4.17,4.18' },
    ],
  },
  ...extra,
});

export const addOn = (ns: string, available = true): ManagedClusterAddOn => ({
  metadata: { namespace: ns, name: 'hcp-fleet' },
  status: {
    conditions: [
      { type: 'Available', status: available ? 'True' : 'False' },
      { type: 'HyperShiftOperatorInstalled', status: 'True', reason: 'Installed' },
    ],
  },
});

export const score = (ns: string, free: number): AddOnPlacementScore => ({
  metadata: { namespace: ns, name: 'hcp-fleet' },
  status: { scores: [{ name: 'freeCapacity', value: free }] },
});

export const hcd = (ns: string, name: string, host = 'mc-1'): HCD => ({
  metadata: { namespace: ns, name, uid: `uid-${ns}-${name}` },
  spec: {
    placement: 'hosts',
    nodePools: [
      { name: `${name}-workers`, spec: { replicas: 2 } },
      { name: `${name}-auto`, spec: { autoScaling: { min: 1, max: 3 } } },
    ],
  },
  status: {
    hostingCluster: host,
    managedCluster: `${ns}-${name}`,
    kubeconfigSecret: { name: `${name}-admin-kubeconfig`, key: 'kubeconfig' },
    version: { current: '4.18.5', desired: { version: '4.18.6' } },
    nodePools: [{ name: `${name}-workers`, replicas: 2, readyReplicas: 1 }],
    conditions: [
      { type: 'Scheduled', status: 'True', reason: 'Scheduled', message: `bound to ${host}` },
      { type: 'Delivered', status: 'True', reason: 'Applied', message: 'applied' },
      { type: 'Available', status: 'True', reason: 'AsExpected', message: 'up' },
      { type: 'Progressing', status: 'True', reason: 'Upgrading', message: 'to 4.18.6' },
      { type: 'NodePoolsReady', status: 'False', reason: 'NodesNotReady', message: '1 of 2 nodes ready' },
    ],
  },
});

export const event = (ns: string, hcdName: string, reason: string, at: string, type = 'Normal'): K8sEvent => ({
  metadata: { namespace: ns, name: `${hcdName}.${reason}`, uid: `${hcdName}-${reason}` },
  type,
  reason,
  message: `${reason} happened`,
  count: 1,
  lastTimestamp: at,
  source: { component: 'hcp-fleet-hub' },
  involvedObject: { kind: 'HostedClusterDeployment', name: hcdName },
});

export const rollout = (ns: string, name: string): ReleaseRollout => ({
  metadata: { namespace: ns, name },
  spec: { release: { image: 'quay.io/openshift-release-dev/ocp-release:4.18.6-multi' } },
  status: {
    observedGeneration: 1,
    wave: 1,
    waves: 3,
    selected: 4,
    done: 1,
    upgrading: 1,
    pending: 1,
    blocked: 1,
    conditions: [
      { type: 'RolloutProgressing', status: 'True', reason: 'WaveInProgress', message: 'wave 1 of 3' },
      { type: 'RolloutCompleted', status: 'False', reason: 'WaveInProgress' },
    ],
    hostedClusters: [
      { name: 'one', wave: 0, state: 'Done' },
      { name: 'two', wave: 1, state: 'Upgrading' },
      { name: 'three', wave: 1, state: 'Blocked', reason: 'ClusterVersionUpgradeable', message: 'held by the gate' },
      { name: 'four', wave: 2, state: 'Pending' },
    ],
  },
});

export const extension = (ns: string, name: string): HostedClusterExtension => ({
  metadata: { namespace: ns, name },
  status: {
    revision: 2,
    selected: 2,
    updated: 2,
    available: 1,
    failed: 1,
    conditions: [
      { type: 'Available', status: 'False', reason: 'NotAllAvailable' },
      { type: 'Degraded', status: 'True', reason: 'ProbeFailed', message: 'one: probe failed' },
    ],
    hostedClusters: [
      { name: 'one', hostingCluster: 'mc-1', revision: 2, state: 'Available' },
      {
        name: 'two',
        hostingCluster: 'mc-1',
        revision: 2,
        state: 'Failed',
        currentPhase: 'deploy',
        failure: { message: 'probe failed' },
      },
    ],
  },
});
