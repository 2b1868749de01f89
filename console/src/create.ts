// The create form's pure parts: what it offers in a namespace and the
// objects it sends. What a tenant may choose is its TenantPolicy's, which
// a tenant cannot read (TenantPolicies are cluster-scoped, selected by
// namespace labels; ClusterImageSets are the admin's): the hub's console
// endpoint answers it (pkg/hosting/hub/consoleapi, CreateOptionsPath) for
// a user the API server lets create HostedClusterDeployments there. The
// form narrows the choice; the API server (RBAC, the CRD's validation) and
// the hub's tenancy check at scheduling stay the authority, and their
// refusals are shown as they come.
import { hubProxy } from './explain';

// consoleapi.CreateOptionsPath.
export const createOptionsURL = (namespace: string): string =>
  `${hubProxy}/api/v1/namespaces/${encodeURIComponent(namespace)}/createoptions`;

// consoleapi.CreateOptions (tenancy.Offer inline).
export interface CreateOptions {
  policy: string;
  refused?: string;
  platforms?: { type: string; agentNamespaces?: string[] }[];
  releaseRepositories?: string[];
  requireDigest?: boolean;
  maxNodePoolReplicas?: number;
  releases: { name: string; image: string; version?: string }[];
  releasesUnknown?: string;
}

export interface Choice {
  value: string;
  label: string;
}

// Choices are what the form offers: nothing at all while the policy
// refuses everything.
export interface Choices {
  releases: Choice[];
  platforms: Choice[];
  agentNamespaces: Record<string, Choice[]>;
  placements: Choice[];
}

export const choices = (options: CreateOptions | undefined, placements: { metadata: { name?: string } }[]): Choices => {
  const none: Choices = { releases: [], platforms: [], agentNamespaces: {}, placements: [] };
  if (!options || options.refused) return none;
  const agentNamespaces: Record<string, Choice[]> = {};
  for (const p of options.platforms ?? []) {
    if (p.agentNamespaces?.length) agentNamespaces[p.type] = p.agentNamespaces.map((ns) => ({ value: ns, label: ns }));
  }
  return {
    // The hub sorted them, newest first.
    releases: options.releases.map((r) => ({ value: r.image, label: r.version ? `${r.version} (${r.name})` : r.name })),
    platforms: (options.platforms ?? []).map((p) => ({ value: p.type, label: p.type })),
    agentNamespaces,
    placements: placements
      .map((p) => p.metadata.name ?? '')
      .filter((n) => n)
      .sort()
      .map((n) => ({ value: n, label: n })),
  };
};

export interface CreateForm {
  namespace: string;
  name: string;
  release: string;
  platform: string;
  agentNamespace: string;
  placement: string;
  baseDomain: string;
  replicas: string;
  pullSecret: string;
}

// The name becomes the HostedCluster's and the ManagedCluster's it is
// imported as: a DNS label, as the CRD says. The API server has the last
// word (reserved names, the length with the hosting namespace).
const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

// problems are the fields that keep the form from sending anything (the
// form says why in its words); it sends only when there are none.
export type Problems = Partial<Record<keyof CreateForm, true>>;

export const problems = (f: CreateForm, c: Choices): Problems => {
  const p: Problems = {};
  if (!dnsLabel.test(f.name) || f.name.length > 63) p.name = true;
  if (!c.releases.some((r) => r.value === f.release)) p.release = true;
  if (!c.platforms.some((x) => x.value === f.platform)) p.platform = true;
  if (f.platform === 'Agent' && !(c.agentNamespaces.Agent ?? []).some((x) => x.value === f.agentNamespace)) {
    p.agentNamespace = true;
  }
  if (!c.placements.some((x) => x.value === f.placement)) p.placement = true;
  if (!f.baseDomain.trim()) p.baseDomain = true;
  if (!/^\d+$/.test(f.replicas.trim()) || Number(f.replicas) > 1000) p.replicas = true;
  try {
    const auths = (JSON.parse(f.pullSecret) as { auths?: unknown })?.auths;
    if (typeof auths !== 'object' || auths === null || Array.isArray(auths)) p.pullSecret = true;
  } catch {
    p.pullSecret = true;
  }
  return p;
};

export const pullSecretName = (name: string): string => `${name}-pull-secret`;

// hcdOf is the HostedClusterDeployment the form creates: one HostedCluster
// and one node pool, with the defaults of HyperShift's `hcp create
// cluster` (cmd/cluster/core/create.go: OVN-Kubernetes, its cluster and
// service networks, managed etcd on persistent volumes, the API server on
// a load balancer and the other services on routes) and the node pool on
// the control plane's release, replaced on upgrade.
export const hcdOf = (f: CreateForm) => {
  const platform: Record<string, unknown> = { type: f.platform };
  if (f.platform === 'Agent') platform.agent = { agentNamespace: f.agentNamespace };
  return {
    apiVersion: 'hcpfleet.io/v1alpha1',
    kind: 'HostedClusterDeployment',
    metadata: { name: f.name, namespace: f.namespace },
    spec: {
      placement: f.placement,
      hostedCluster: {
        spec: {
          release: { image: f.release },
          pullSecret: { name: pullSecretName(f.name) },
          platform,
          dns: { baseDomain: f.baseDomain.trim() },
          networking: {
            networkType: 'OVNKubernetes',
            clusterNetwork: [{ cidr: '10.132.0.0/14' }],
            serviceNetwork: [{ cidr: '172.31.0.0/16' }],
          },
          etcd: { managementType: 'Managed', managed: { storage: { type: 'PersistentVolume' } } },
          services: [
            { service: 'APIServer', servicePublishingStrategy: { type: 'LoadBalancer' } },
            { service: 'Ignition', servicePublishingStrategy: { type: 'Route' } },
            { service: 'Konnectivity', servicePublishingStrategy: { type: 'Route' } },
            { service: 'OAuthServer', servicePublishingStrategy: { type: 'Route' } },
          ],
        },
      },
      nodePools: [
        {
          name: `${f.name}-workers`,
          spec: {
            clusterName: f.name,
            replicas: Number(f.replicas),
            release: { image: f.release },
            management: { upgradeType: 'Replace' },
            platform: { type: f.platform },
          },
        },
      ],
    },
  };
};

// pullSecretOf is the pull secret the deployment names, owned by the
// created deployment (uid from the API server's answer) so that it goes
// with it. No blockOwnerDeletion: that needs the finalizers subresource,
// which tenants are not granted.
export const pullSecretOf = (f: CreateForm, owner: { metadata: { uid?: string } }) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    name: pullSecretName(f.name),
    namespace: f.namespace,
    ownerReferences: [
      {
        apiVersion: 'hcpfleet.io/v1alpha1',
        kind: 'HostedClusterDeployment',
        name: f.name,
        uid: owner.metadata.uid ?? '',
      },
    ],
  },
  type: 'kubernetes.io/dockerconfigjson',
  stringData: { '.dockerconfigjson': f.pullSecret },
});
