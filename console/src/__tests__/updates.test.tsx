import '@testing-library/jest-dom';
import * as React from 'react';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { k8sPatch } from '@openshift-console/dynamic-plugin-sdk';
import { HCDUpdates } from '../components/HCDUpdates';
import { canUpgrade, updateRows, upgradePatch } from '../updates';
import type { HCD } from '../fleet';
import { hcd } from './fixtures';

jest.mock('@openshift-console/dynamic-plugin-sdk', () => ({
  k8sPatch: jest.fn(),
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
}));
const patch = k8sPatch as jest.Mock;

const current = 'quay.io/openshift-release-dev/ocp-release:4.18.5-x86_64';
const image = (v: string) => `quay.io/openshift-release-dev/ocp-release:${v}-x86_64`;

// 4.18.9 and 4.18.7 available (the hub publishes 4.18.9 only), 4.18.11
// conditional with two risks.
const withUpdates = (): HCD => {
  const h = hcd('team-a', 'one');
  h.spec = { ...h.spec, hostedCluster: { spec: { release: { image: current } } } };
  h.status = {
    ...h.status,
    version: {
      current: '4.18.5',
      availableUpdates: [
        { version: '4.18.9', image: image('4.18.9') },
        { version: '4.18.7', image: image('4.18.7') },
      ],
      conditionalUpdates: [
        { release: { version: '4.18.9', image: image('4.18.9') }, recommended: 'True' },
        {
          release: { version: '4.18.11', image: image('4.18.11') },
          recommended: 'False',
          reason: 'MultipleReasons',
          risks: [{ name: 'EtcdSlow' }, { name: 'OVNDrops' }],
        },
      ],
    },
  };
  return h;
};
const hubSays = { mayGoTo: ['4.18.9'], unpublished: ['4.18.7'], conditional: ['4.18.11 (EtcdSlow, OVNDrops)'] };

beforeEach(() => patch.mockReset());

describe('update view functions', () => {
  it('lists the available updates, then the conditional ones with their risks', () => {
    expect(updateRows(withUpdates(), hubSays)).toEqual([
      { version: '4.18.9', image: image('4.18.9'), recommended: true, risks: [], published: true },
      { version: '4.18.7', image: image('4.18.7'), recommended: true, risks: [], published: false },
      {
        version: '4.18.11',
        image: image('4.18.11'),
        recommended: false,
        risks: ['EtcdSlow', 'OVNDrops'],
        published: undefined,
      },
    ]);
  });

  it('offers an upgrade only to a recommended update the hub publishes', () => {
    expect(updateRows(withUpdates(), hubSays).map(canUpgrade)).toEqual([true, false, false]);
    // The hub has not answered, or could not read its ClusterImageSets.
    expect(updateRows(withUpdates(), undefined).map(canUpgrade)).toEqual([false, false, false]);
    expect(
      updateRows(withUpdates(), { ...hubSays, imageSetsUnknown: 'ClusterImageSets not readable' }).map(canUpgrade),
    ).toEqual([false, false, false]);
    expect(updateRows(hcd('team-a', 'one'), hubSays)).toEqual([]);
  });

  it('patches the control plane release only if it is still the one shown', () => {
    expect(upgradePatch(withUpdates(), image('4.18.9'))).toEqual([
      { op: 'test', path: '/spec/hostedCluster/spec/release/image', value: current },
      { op: 'replace', path: '/spec/hostedCluster/spec/release/image', value: image('4.18.9') },
    ]);
  });
});

describe('HCDUpdates', () => {
  it('upgrades as the user and says so', async () => {
    patch.mockResolvedValue({});
    const h = withUpdates();
    render(<HCDUpdates hcd={h} updates={hubSays} />);
    expect(
      within(screen.getByTestId('update-4.18.7')).getByText('no ClusterImageSet on the hub publishes it'),
    ).toBeInTheDocument();
    expect(within(screen.getByTestId('update-4.18.11')).getByText('no: EtcdSlow, OVNDrops')).toBeInTheDocument();
    expect(screen.queryByTestId('upgrade-4.18.7')).toBeNull();
    fireEvent.click(screen.getByTestId('upgrade-4.18.9'));
    expect(await screen.findByTestId('upgraded-4.18.9')).toHaveTextContent('requested 4.18.9');
    expect(patch).toHaveBeenCalledWith(
      expect.objectContaining({ resource: h, data: upgradePatch(h, image('4.18.9')) }),
    );
  });

  it("shows the API server's refusal", async () => {
    patch.mockRejectedValue({
      message: 'Forbidden',
      json: { message: 'admission webhook denied the request: release 4.18.9 is not allowed by TenantPolicy team-a' },
    });
    render(<HCDUpdates hcd={withUpdates()} updates={hubSays} />);
    fireEvent.click(screen.getByTestId('upgrade-4.18.9'));
    expect(await screen.findByTestId('upgrade-error-4.18.9')).toHaveTextContent('not allowed by TenantPolicy team-a');
  });

  it('says when there is nothing to go to', () => {
    render(<HCDUpdates hcd={hcd('team-a', 'one')} updates={undefined} />);
    expect(screen.getByTestId('no-updates')).toBeInTheDocument();
  });
});
