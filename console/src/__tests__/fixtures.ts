// Hub objects as the API server returns them, for the unit tests.
import type { HCD, ManagedCluster, ManagedClusterAddOn, AddOnPlacementScore } from '../fleet';

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
  metadata: { namespace: ns, name },
  spec: { placement: 'hosts' },
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
