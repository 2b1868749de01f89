import '@testing-library/jest-dom';
import * as React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { consoleFetchJSON, k8sCreate, useK8sWatchResource } from '@openshift-console/dynamic-plugin-sdk';
import HCDCreate from '../components/HCDCreate';
import {
  choices,
  createOptionsURL,
  hcdOf,
  problems,
  pullSecretOf,
  type CreateForm,
  type CreateOptions,
} from '../create';

jest.mock('@openshift-console/dynamic-plugin-sdk', () => ({
  consoleFetchJSON: jest.fn(),
  k8sCreate: jest.fn(),
  useK8sWatchResource: jest.fn(),
  useK8sModel: jest.fn((gvk: { kind: string }) => [
    { kind: gvk.kind, plural: `${gvk.kind.toLowerCase()}s`, namespaced: true },
    false,
  ]),
}));
const fetchJSON = consoleFetchJSON as unknown as jest.Mock;
const create = k8sCreate as jest.Mock;
const watch = useK8sWatchResource as jest.Mock;

// What the hub answers for team-a under the built-in policy with two
// ClusterImageSets it allows (consoleapi.CreateOptions).
const options = (extra: Partial<CreateOptions> = {}): CreateOptions => ({
  policy: 'the built-in default tenant policy',
  platforms: [{ type: 'KubeVirt' }, { type: 'None' }],
  releaseRepositories: ['quay.io/openshift-release-dev/ocp-release'],
  releases: [
    {
      name: 'img4.19.2-multi-appsub',
      image: 'quay.io/openshift-release-dev/ocp-release:4.19.2-multi',
      version: '4.19.2',
    },
    { name: 'custom', image: 'quay.io/openshift-release-dev/ocp-release@sha256:0123' },
  ],
  ...extra,
});
const placements = [{ metadata: { name: 'hosts' } }, { metadata: { name: 'edge' } }];

const form = (extra: Partial<CreateForm> = {}): CreateForm => ({
  namespace: 'team-a',
  name: 'new-one',
  release: 'quay.io/openshift-release-dev/ocp-release:4.19.2-multi',
  platform: 'None',
  agentNamespace: '',
  placement: 'hosts',
  baseDomain: 'example.com',
  replicas: '2',
  pullSecret: '{"auths":{}}',
  ...extra,
});

describe('what the form offers', () => {
  it('offers the releases, platforms and placements it was given, and nothing under a policy that refuses all', () => {
    const c = choices(
      options({ platforms: [{ type: 'Agent', agentNamespaces: ['agents-a'] }, { type: 'None' }] }),
      placements,
    );
    expect(c.releases).toEqual([
      { value: 'quay.io/openshift-release-dev/ocp-release:4.19.2-multi', label: '4.19.2 (img4.19.2-multi-appsub)' },
      { value: 'quay.io/openshift-release-dev/ocp-release@sha256:0123', label: 'custom' },
    ]);
    expect(c.platforms.map((p) => p.value)).toEqual(['Agent', 'None']);
    expect(c.agentNamespaces).toEqual({ Agent: [{ value: 'agents-a', label: 'agents-a' }] });
    expect(c.placements.map((p) => p.value)).toEqual(['edge', 'hosts']);
    const none = choices(
      options({ refused: 'namespace team-a is selected by more than one TenantPolicy' }),
      placements,
    );
    expect(none).toEqual({ releases: [], platforms: [], agentNamespaces: {}, placements: [] });
    expect(choices(undefined, placements).releases).toEqual([]);
  });

  it('finds nothing wrong with a choice it offers, and names each field that is wrong', () => {
    const c = choices(options(), placements);
    expect(problems(form(), c)).toEqual({});
    const p = problems(
      form({
        name: 'New_One',
        release: 'quay.io/elsewhere:4.19',
        platform: 'AWS',
        placement: 'other',
        baseDomain: ' ',
        replicas: '2.5',
        pullSecret: '{"auths":[]}',
      }),
      c,
    );
    expect(Object.keys(p).sort()).toEqual([
      'baseDomain',
      'name',
      'placement',
      'platform',
      'pullSecret',
      'release',
      'replicas',
    ]);
    expect(problems(form({ pullSecret: 'not json' }), c)).toEqual({ pullSecret: true });
    expect(
      problems(
        form({ platform: 'Agent' }),
        choices(options({ platforms: [{ type: 'Agent', agentNamespaces: ['agents-a'] }] }), placements),
      ),
    ).toEqual({
      agentNamespace: true,
    });
  });
});

describe('what the form sends', () => {
  it('builds the deployment with one node pool on the chosen release, placement and platform', () => {
    const h = hcdOf(form({ platform: 'Agent', agentNamespace: 'agents-a', replicas: '3' }));
    expect(h.metadata).toEqual({ name: 'new-one', namespace: 'team-a' });
    expect(h.spec.placement).toBe('hosts');
    const hc = h.spec.hostedCluster.spec;
    expect(hc.release.image).toBe('quay.io/openshift-release-dev/ocp-release:4.19.2-multi');
    expect(hc.pullSecret).toEqual({ name: 'new-one-pull-secret' });
    expect(hc.platform).toEqual({ type: 'Agent', agent: { agentNamespace: 'agents-a' } });
    expect(hc.dns).toEqual({ baseDomain: 'example.com' });
    expect(hc.services.map((s) => `${s.service}:${s.servicePublishingStrategy.type}`)).toEqual([
      'APIServer:LoadBalancer',
      'Ignition:Route',
      'Konnectivity:Route',
      'OAuthServer:Route',
    ]);
    expect(h.spec.nodePools).toEqual([
      {
        name: 'new-one-workers',
        spec: {
          clusterName: 'new-one',
          replicas: 3,
          release: { image: 'quay.io/openshift-release-dev/ocp-release:4.19.2-multi' },
          management: { upgradeType: 'Replace' },
          platform: { type: 'Agent' },
        },
      },
    ]);
  });

  it('builds the pull secret the deployment names, owned by it', () => {
    expect(pullSecretOf(form(), { metadata: { uid: 'u-1' } })).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'new-one-pull-secret',
        namespace: 'team-a',
        ownerReferences: [
          { apiVersion: 'hcpfleet.io/v1alpha1', kind: 'HostedClusterDeployment', name: 'new-one', uid: 'u-1' },
        ],
      },
      type: 'kubernetes.io/dockerconfigjson',
      stringData: { '.dockerconfigjson': '{"auths":{}}' },
    });
  });
});

const page = () =>
  render(
    <MemoryRouter initialEntries={['/hcpfleet/ns/team-a/create-hostedclusterdeployment']}>
      <Routes>
        <Route path="/hcpfleet/ns/:ns/create-hostedclusterdeployment" element={<HCDCreate />} />
      </Routes>
    </MemoryRouter>,
  );

const fill = (id: string, value: string) => fireEvent.change(screen.getByTestId(id), { target: { value } });

describe('HCDCreate', () => {
  beforeEach(() => {
    fetchJSON.mockReset();
    create.mockReset();
    watch.mockReset();
    watch.mockReturnValue([placements, true, undefined]);
  });

  it('asks the hub for the offer, preselects it, and creates the deployment and then its pull secret', async () => {
    fetchJSON.mockResolvedValue(options());
    // The API server answers the created object, with its uid.
    create.mockImplementation(({ data }: { data: { metadata: object } }) =>
      Promise.resolve({ ...data, metadata: { ...data.metadata, uid: 'u-1' } }),
    );
    page();
    await screen.findByTestId('create-form');
    expect(fetchJSON).toHaveBeenCalledWith(createOptionsURL('team-a'));
    expect(createOptionsURL('team-a')).toBe('/api/proxy/plugin/hcp-fleet/hub/api/v1/namespaces/team-a/createoptions');
    expect(screen.getByTestId('create-release')).toHaveValue('quay.io/openshift-release-dev/ocp-release:4.19.2-multi');
    expect(screen.getByTestId('create-placement')).toHaveValue('edge');
    expect(screen.getByTestId('create-policy')).toHaveTextContent('the built-in default tenant policy');
    fill('create-name', 'new-one');
    fill('create-platform', 'None');
    fill('create-placement', 'hosts');
    fill('create-baseDomain', 'example.com');
    fill('create-pullSecret', '{"auths":{}}');
    fireEvent.click(screen.getByTestId('create-submit'));
    await screen.findByTestId('created');
    expect(create).toHaveBeenCalledTimes(2);
    expect(create.mock.calls[0][0].model.kind).toBe('HostedClusterDeployment');
    expect(create.mock.calls[0][0].data).toEqual(hcdOf(form()));
    expect(create.mock.calls[1][0].model.kind).toBe('Secret');
    expect(create.mock.calls[1][0].data).toEqual(pullSecretOf(form(), { metadata: { uid: 'u-1' } }));
    expect(screen.getByTestId('created')).toHaveTextContent('Created new-one');
  });

  it("shows the API server's refusal word for word and creates no pull secret", async () => {
    fetchJSON.mockResolvedValue(options());
    const refusal = 'hostedclusterdeployments.hcpfleet.io "a-cluster" already exists';
    create.mockRejectedValue({ message: 'Conflict', json: { message: refusal } });
    page();
    await screen.findByTestId('create-form');
    fill('create-name', 'a-cluster');
    fill('create-baseDomain', 'example.com');
    fill('create-pullSecret', '{"auths":{}}');
    fireEvent.click(screen.getByTestId('create-submit'));
    expect(await screen.findByTestId('create-error')).toHaveTextContent(refusal);
    expect(create).toHaveBeenCalledTimes(1);
  });

  it('sends nothing while a field is wrong, and says which', async () => {
    fetchJSON.mockResolvedValue(options());
    page();
    await screen.findByTestId('create-form');
    fill('create-name', 'Bad_Name');
    fireEvent.click(screen.getByTestId('create-submit'));
    expect(await screen.findByText(/lowercase RFC 1123 label/)).toBeInTheDocument();
    expect(screen.getByText(/"auths" object/)).toBeInTheDocument();
    expect(create).not.toHaveBeenCalled();
  });

  it("shows the hub's refusal and no form when the user may not create here", async () => {
    fetchJSON.mockRejectedValue({
      message: 'Forbidden',
      json: {
        message:
          'hostedclusterdeployments.hcpfleet.io is forbidden: User "alice" cannot create resource "hostedclusterdeployments"',
      },
    });
    page();
    expect(await screen.findByTestId('load-error')).toHaveTextContent('User "alice" cannot create resource');
    expect(screen.queryByTestId('create-form')).toBeNull();
  });

  it('offers nothing and cannot submit under a policy that allows nothing', async () => {
    fetchJSON.mockResolvedValue(
      options({
        refused: 'namespace team-a is selected by more than one TenantPolicy (a, b)',
        platforms: undefined,
        releases: [],
      }),
    );
    page();
    expect(await screen.findByTestId('create-refused-policy')).toHaveTextContent('more than one TenantPolicy (a, b)');
    expect(screen.getByTestId('create-submit')).toBeDisabled();
    expect(screen.getByTestId('create-release')).toHaveTextContent('none offered');
  });
});
