// The kinds the plugin reads. Every read goes through the console's k8s
// hooks, so the API server authorizes it as the signed-in user: a tenant
// sees its own namespaces and is refused the rest (never hidden by us).
import type { K8sGroupVersionKind } from '@openshift-console/dynamic-plugin-sdk';

export const HCDModel: K8sGroupVersionKind = {
  group: 'hcpfleet.io',
  version: 'v1alpha1',
  kind: 'HostedClusterDeployment',
};

export const ManagedClusterModel: K8sGroupVersionKind = {
  group: 'cluster.open-cluster-management.io',
  version: 'v1',
  kind: 'ManagedCluster',
};

export const ManagedClusterAddOnModel: K8sGroupVersionKind = {
  group: 'addon.open-cluster-management.io',
  version: 'v1alpha1',
  kind: 'ManagedClusterAddOn',
};

export const AddOnPlacementScoreModel: K8sGroupVersionKind = {
  group: 'cluster.open-cluster-management.io',
  version: 'v1alpha1',
  kind: 'AddOnPlacementScore',
};

export const EventModel: K8sGroupVersionKind = { version: 'v1', kind: 'Event' };

export const SecretModel: K8sGroupVersionKind = { version: 'v1', kind: 'Secret' };

export const ReleaseRolloutModel: K8sGroupVersionKind = {
  group: 'hcpfleet.io',
  version: 'v1alpha1',
  kind: 'ReleaseRollout',
};

export const HostedClusterExtensionModel: K8sGroupVersionKind = {
  group: 'hcpfleet.io',
  version: 'v1alpha1',
  kind: 'HostedClusterExtension',
};

export const PlacementModel: K8sGroupVersionKind = {
  group: 'cluster.open-cluster-management.io',
  version: 'v1beta1',
  kind: 'Placement',
};
