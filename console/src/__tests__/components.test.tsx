import '@testing-library/jest-dom';
import * as React from 'react';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { k8sPatch, useK8sWatchResource } from '@openshift-console/dynamic-plugin-sdk';
import FleetOverview from '../components/FleetOverview';
import HCDList from '../components/HCDList';
import HCDDetails from '../components/HCDDetails';
import Rollouts from '../components/Rollouts';
import { addOn, cluster, event, extension, hcd, rollout, score } from './fixtures';

// The console provides the hooks; the tests answer them per kind, as the
// API server would for the reader. ResourceLink renders the console's
// resource path (resourcePathFromModel).
jest.mock('@openshift-console/dynamic-plugin-sdk', () => {
  const R = jest.requireActual('react');
  return {
    useK8sWatchResource: jest.fn(),
    useK8sModel: jest.fn(() => [
      {
        apiGroup: 'hcpfleet.io',
        apiVersion: 'v1alpha1',
        kind: 'HostedClusterDeployment',
        plural: 'hostedclusterdeployments',
        namespaced: true,
      },
      false,
    ]),
    k8sPatch: jest.fn(),
    // The hub's explanation (explain.test.tsx tests it): pending here.
    consoleFetchJSON: jest.fn(() => new Promise(() => undefined)),
    ResourceLink: ({
      groupVersionKind: g,
      name,
      namespace,
    }: {
      groupVersionKind: { group?: string; version: string; kind: string };
      name: string;
      namespace?: string;
    }) =>
      R.createElement(
        'a',
        {
          href: `/k8s/${namespace ? `ns/${namespace}` : 'cluster'}/${g.group ? `${g.group}~${g.version}~${g.kind}` : `${g.kind.toLowerCase()}s`}/${name}`,
        },
        name,
      ),
  };
});
const watch = useK8sWatchResource as jest.Mock;
const patch = k8sPatch as jest.Mock;

type Answer = [unknown, boolean, unknown];
const answer = (byKind: Record<string, Answer>) =>
  watch.mockImplementation(
    (r: { groupVersionKind: { kind: string } }) => byKind[r.groupVersionKind.kind] ?? [[], true, undefined],
  );

const forbidden = (what: string) => ({
  message: 'Forbidden',
  json: { message: `${what} is forbidden: User "tenant-a" cannot list resource` },
});

const at = (path: string, route: string, el: React.ReactElement) =>
  render(
    <MemoryRouter initialEntries={[path]}>
      <Routes>
        <Route path={route} element={el} />
      </Routes>
    </MemoryRouter>,
  );

beforeEach(() => {
  watch.mockReset();
  patch.mockReset();
});

describe('FleetOverview', () => {
  it('shows each management cluster with capacity, cordon, add-on and its hosted clusters', () => {
    answer({
      ManagedCluster: [
        [cluster('mc-1'), cluster('mc-2', { spec: { taints: [{ key: 'hcpfleet.io/unschedulable' }] } })],
        true,
        undefined,
      ],
      ManagedClusterAddOn: [[addOn('mc-1')], true, undefined],
      AddOnPlacementScore: [[score('mc-1', 7)], true, undefined],
      HostedClusterDeployment: [[hcd('team-a', 'one')], true, undefined],
    });
    at('/hcpfleet/fleet', '/hcpfleet/fleet', <FleetOverview />);
    const mc1 = screen.getByTestId('host-mc-1') ?? null;
    expect(within(mc1).getByText('1 / 10')).toBeInTheDocument();
    expect(within(mc1).getByText('Available')).toBeInTheDocument();
    expect(within(mc1).getByRole('link', { name: 'team-a/one' })).toHaveAttribute(
      'href',
      '/hcpfleet/ns/team-a/hostedclusterdeployments/one',
    );
    expect(within(mc1).queryByText('Cordoned')).toBeNull();
    expect(within(screen.getByTestId('host-mc-2')).getByText('Cordoned')).toBeInTheDocument();
  });

  it('says why a tenant sees no management clusters', () => {
    answer({
      ManagedCluster: [[], false, forbidden('managedclusters.cluster.open-cluster-management.io')],
      HostedClusterDeployment: [[], false, forbidden('hostedclusterdeployments.hcpfleet.io')],
    });
    at('/hcpfleet/fleet', '/hcpfleet/fleet', <FleetOverview />);
    expect(screen.queryByTestId('hosts')).toBeNull();
    expect(screen.getByText(/managedclusters.cluster.open-cluster-management.io is forbidden/)).toBeInTheDocument();
  });
});

describe('HCDList', () => {
  it('watches the namespace of the route and lists phase, host and version', () => {
    answer({ HostedClusterDeployment: [[hcd('team-a', 'two'), hcd('team-a', 'one')], true, undefined] });
    at('/hcpfleet/ns/team-a/hostedclusterdeployments', '/hcpfleet/ns/:ns/hostedclusterdeployments', <HCDList />);
    expect(watch).toHaveBeenCalledWith(expect.objectContaining({ namespace: 'team-a', isList: true }));
    const rows = screen.getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[0].textContent)).toEqual(['one', 'two']);
    expect(within(rows[0]).getByText('Upgrading')).toBeInTheDocument();
    expect(within(rows[0]).getByText('4.18.5 → 4.18.6')).toBeInTheDocument();
  });

  it('shows the API server refusal for all namespaces', () => {
    answer({ HostedClusterDeployment: [[], false, forbidden('hostedclusterdeployments.hcpfleet.io')] });
    at(
      '/hcpfleet/all-namespaces/hostedclusterdeployments',
      '/hcpfleet/all-namespaces/hostedclusterdeployments',
      <HCDList />,
    );
    expect(watch).toHaveBeenCalledWith(expect.objectContaining({ namespace: undefined }));
    expect(screen.getByTestId('load-error')).toHaveTextContent('is forbidden');
  });
});

describe('HCDDetails', () => {
  it('shows host, version, kubeconfig Secret, node pools and every condition with reason and message', () => {
    answer({ HostedClusterDeployment: [hcd('team-a', 'one'), true, undefined] });
    at(
      '/hcpfleet/ns/team-a/hostedclusterdeployments/one',
      '/hcpfleet/ns/:ns/hostedclusterdeployments/:name',
      <HCDDetails />,
    );
    expect(watch).toHaveBeenCalledWith(expect.objectContaining({ namespace: 'team-a', name: 'one' }));
    expect(screen.getByTestId('field-Host')).toHaveTextContent('mc-1');
    expect(screen.getByTestId('field-Kubeconfig Secret')).toHaveTextContent('one-admin-kubeconfig');
    expect(screen.getByTestId('field-Imported as')).toHaveTextContent('team-a-one');
    expect(within(screen.getByTestId('nodepools')).getByText('1 / 2')).toBeInTheDocument();
    const np = screen.getByTestId('condition-NodePoolsReady');
    expect(np).toHaveTextContent('NodesNotReady');
    expect(np).toHaveTextContent('1 of 2 nodes ready');
  });

  it('links the imported ManagedCluster and the kubeconfig Secret to their console pages', () => {
    answer({ HostedClusterDeployment: [hcd('team-a', 'one'), true, undefined] });
    at(
      '/hcpfleet/ns/team-a/hostedclusterdeployments/one',
      '/hcpfleet/ns/:ns/hostedclusterdeployments/:name',
      <HCDDetails />,
    );
    expect(within(screen.getByTestId('field-Imported as')).getByRole('link', { name: 'team-a-one' })).toHaveAttribute(
      'href',
      '/k8s/cluster/cluster.open-cluster-management.io~v1~ManagedCluster/team-a-one',
    );
    expect(
      within(screen.getByTestId('field-Kubeconfig Secret')).getByRole('link', { name: 'one-admin-kubeconfig' }),
    ).toHaveAttribute('href', '/k8s/ns/team-a/secrets/one-admin-kubeconfig');
  });

  it('lists the Events about this deployment, newest first', () => {
    answer({
      HostedClusterDeployment: [hcd('team-a', 'one'), true, undefined],
      Event: [
        [
          event('team-a', 'one', 'Scheduled', '2026-01-01T10:00:00Z'),
          event('team-a', 'one', 'Imported', '2026-01-01T11:00:00Z', 'Warning'),
        ],
        true,
        undefined,
      ],
    });
    at(
      '/hcpfleet/ns/team-a/hostedclusterdeployments/one',
      '/hcpfleet/ns/:ns/hostedclusterdeployments/:name',
      <HCDDetails />,
    );
    expect(watch).toHaveBeenCalledWith(
      expect.objectContaining({
        groupVersionKind: { version: 'v1', kind: 'Event' },
        namespace: 'team-a',
        isList: true,
        fieldSelector:
          'involvedObject.kind=HostedClusterDeployment,involvedObject.name=one,involvedObject.uid=uid-team-a-one',
      }),
    );
    const rows = within(screen.getByTestId('events')).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[2].textContent)).toEqual(['Imported', 'Scheduled']);
    expect(rows[1]).toHaveTextContent('Scheduled happened');
  });

  it('shows the API server refusal of the Events', () => {
    answer({
      HostedClusterDeployment: [hcd('team-a', 'one'), true, undefined],
      Event: [[], false, forbidden('events')],
    });
    at(
      '/hcpfleet/ns/team-a/hostedclusterdeployments/one',
      '/hcpfleet/ns/:ns/hostedclusterdeployments/:name',
      <HCDDetails />,
    );
    expect(screen.getByTestId('load-error')).toHaveTextContent('events is forbidden');
  });

  it('scales a node pool by patching spec.nodePools[].replicas as the user', async () => {
    const one = hcd('team-a', 'one');
    answer({ HostedClusterDeployment: [one, true, undefined] });
    patch.mockResolvedValue(one);
    at(
      '/hcpfleet/ns/team-a/hostedclusterdeployments/one',
      '/hcpfleet/ns/:ns/hostedclusterdeployments/:name',
      <HCDDetails />,
    );
    // An autoscaled pool has no scale action: HyperShift's autoscaler owns its replicas.
    expect(screen.getByTestId('nodepool-one-auto')).toHaveTextContent('autoscaling 1–3');
    expect(screen.queryByTestId('scale-one-auto')).toBeNull();
    const button = screen.getByTestId('scale-one-workers');
    expect(button).toBeDisabled();
    fireEvent.change(screen.getByTestId('scale-input-one-workers'), { target: { value: 'many' } });
    expect(button).toBeDisabled();
    fireEvent.change(screen.getByTestId('scale-input-one-workers'), { target: { value: '5' } });
    fireEvent.click(button);
    await waitFor(() => expect(screen.getByTestId('scaled-one-workers')).toHaveTextContent('requested 5'));
    expect(patch).toHaveBeenCalledWith({
      model: expect.objectContaining({ kind: 'HostedClusterDeployment' }),
      resource: one,
      data: [
        { op: 'test', path: '/spec/nodePools/0/name', value: 'one-workers' },
        { op: 'add', path: '/spec/nodePools/0/spec/replicas', value: 5 },
      ],
    });
  });

  it('shows the API server refusal of a scale', async () => {
    answer({ HostedClusterDeployment: [hcd('team-a', 'one'), true, undefined] });
    patch.mockRejectedValue({
      message: 'Forbidden',
      json: { message: 'hostedclusterdeployments.hcpfleet.io "one" is forbidden: User "bob" cannot patch' },
    });
    at(
      '/hcpfleet/ns/team-a/hostedclusterdeployments/one',
      '/hcpfleet/ns/:ns/hostedclusterdeployments/:name',
      <HCDDetails />,
    );
    fireEvent.change(screen.getByTestId('scale-input-one-workers'), { target: { value: '3' } });
    fireEvent.click(screen.getByTestId('scale-one-workers'));
    await waitFor(() => expect(screen.getByTestId('scale-error-one-workers')).toHaveTextContent('cannot patch'));
  });
});

describe('Rollouts', () => {
  it('shows each release rollout and extension of the namespace with its progress and hosted clusters', () => {
    answer({
      ReleaseRollout: [[rollout('team-a', 'to-4-18-6')], true, undefined],
      HostedClusterExtension: [[extension('team-a', 'logging')], true, undefined],
    });
    at('/hcpfleet/ns/team-a/rollouts', '/hcpfleet/ns/:ns/rollouts', <Rollouts />);
    expect(watch).toHaveBeenCalledWith(
      expect.objectContaining({
        groupVersionKind: expect.objectContaining({ kind: 'ReleaseRollout' }),
        namespace: 'team-a',
        isList: true,
      }),
    );
    const rr = screen.getByTestId('rollout-to-4-18-6');
    expect(rr).toHaveTextContent('ocp-release:4.18.6-multi');
    expect(rr).toHaveTextContent('1 of 4 done');
    expect(rr).toHaveTextContent('1 pending, 1 upgrading, 1 blocked');
    expect(rr).toHaveTextContent('1 of 3');
    expect(screen.getByTestId('rollout-state-to-4-18-6')).toHaveTextContent('WaveInProgress');
    expect(rr).toHaveTextContent('three: Blocked (ClusterVersionUpgradeable)');
    const hce = screen.getByTestId('extension-logging');
    expect(hce).toHaveTextContent('1 of 2 available');
    expect(screen.getByTestId('extension-state-logging')).toHaveTextContent('Degraded');
    expect(hce).toHaveTextContent('two: Failed (phase deploy)');
  });

  it('shows the API server refusal per kind, and says when there is none', () => {
    answer({
      ReleaseRollout: [[], false, forbidden('releaserollouts.hcpfleet.io')],
      HostedClusterExtension: [[], true, undefined],
    });
    at('/hcpfleet/all-namespaces/rollouts', '/hcpfleet/all-namespaces/rollouts', <Rollouts />);
    expect(screen.getByTestId('load-error')).toHaveTextContent('releaserollouts.hcpfleet.io is forbidden');
    expect(screen.getByTestId('none-hostedclusterextensions')).toHaveTextContent('No HostedClusterExtensions.');
  });
});
