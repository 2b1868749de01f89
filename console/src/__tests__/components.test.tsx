import '@testing-library/jest-dom';
import * as React from 'react';
import { render, screen, within } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { useK8sWatchResource } from '@openshift-console/dynamic-plugin-sdk';
import FleetOverview from '../components/FleetOverview';
import HCDList from '../components/HCDList';
import HCDDetails from '../components/HCDDetails';
import { addOn, cluster, hcd, score } from './fixtures';

// The console provides the hook; the tests answer it per kind, as the API
// server would for the reader.
jest.mock('@openshift-console/dynamic-plugin-sdk', () => ({ useK8sWatchResource: jest.fn() }));
const watch = useK8sWatchResource as jest.Mock;

type Answer = [unknown, boolean, unknown];
const answer = (byKind: Record<string, Answer>) =>
  watch.mockImplementation((r: { groupVersionKind: { kind: string } }) => byKind[r.groupVersionKind.kind] ?? [[], true, undefined]);

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

beforeEach(() => watch.mockReset());

describe('FleetOverview', () => {
  it('shows each management cluster with capacity, cordon, add-on and its hosted clusters', () => {
    answer({
      ManagedCluster: [[cluster('mc-1'), cluster('mc-2', { spec: { taints: [{ key: 'hcpfleet.io/unschedulable' }] } })], true, undefined],
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
    at('/hcpfleet/all-namespaces/hostedclusterdeployments', '/hcpfleet/all-namespaces/hostedclusterdeployments', <HCDList />);
    expect(watch).toHaveBeenCalledWith(expect.objectContaining({ namespace: undefined }));
    expect(screen.getByTestId('load-error')).toHaveTextContent('is forbidden');
  });
});

describe('HCDDetails', () => {
  it('shows host, version, kubeconfig Secret, node pools and every condition with reason and message', () => {
    answer({ HostedClusterDeployment: [hcd('team-a', 'one'), true, undefined] });
    at('/hcpfleet/ns/team-a/hostedclusterdeployments/one', '/hcpfleet/ns/:ns/hostedclusterdeployments/:name', <HCDDetails />);
    expect(watch).toHaveBeenCalledWith(expect.objectContaining({ namespace: 'team-a', name: 'one' }));
    expect(screen.getByTestId('field-Host')).toHaveTextContent('mc-1');
    expect(screen.getByTestId('field-Kubeconfig Secret')).toHaveTextContent('one-admin-kubeconfig');
    expect(screen.getByTestId('field-Imported as')).toHaveTextContent('team-a-one');
    expect(within(screen.getByTestId('nodepools')).getByText('1 / 2')).toBeInTheDocument();
    const np = screen.getByTestId('condition-NodePoolsReady');
    expect(np).toHaveTextContent('NodesNotReady');
    expect(np).toHaveTextContent('1 of 2 nodes ready');
  });
});
