import { hosts, phase, problem, version } from '../fleet';
import { addOn, cluster, hcd, score } from './fixtures';

describe('phase (api/v1alpha1/phase.go)', () => {
  it('is Pending until bound, Delivering until applied', () => {
    const h = hcd('team-a', 'one');
    expect(phase(h)).toBe('Upgrading');
    expect(phase({ ...h, status: { ...h.status, hostingCluster: '' } })).toBe('Pending');
    expect(
      phase({ ...h, status: { ...h.status, conditions: h.status.conditions.filter((c) => c.type !== 'Delivered') } }),
    ).toBe('Delivering');
  });
  it('is Degraded over everything but deletion', () => {
    const h = hcd('team-a', 'one');
    h.status.conditions.push({ type: 'Degraded', status: 'True' });
    expect(phase(h)).toBe('Degraded');
    expect(phase({ ...h, metadata: { ...h.metadata, deletionTimestamp: 'x' } })).toBe('Deleting');
    expect(phase({ ...h, spec: { deletionPolicy: 'Orphan' }, metadata: { ...h.metadata, deletionTimestamp: 'x' } })).toBe(
      'Orphaning',
    );
  });
});

describe('version and problem (pkg/fleetview)', () => {
  it('shows a rollout as current → desired', () => {
    expect(version(hcd('a', 'b'))).toBe('4.18.5 → 4.18.6');
  });
  it('names the first unhealthy condition, skipping Progressing', () => {
    expect(problem(hcd('a', 'b'))).toBe('NodePoolsReady NodesNotReady: 1 of 2 nodes ready');
  });
});

describe('hosts', () => {
  it('joins add-on, score, cordon and deployments, and leaves imported hosted clusters out', () => {
    const imported = cluster('team-a-one', { metadata: { name: 'team-a-one', labels: { 'hcpfleet.io/hcd-name': 'one' } } });
    const cordoned = cluster('mc-2', { spec: { taints: [{ key: 'hcpfleet.io/unschedulable', effect: 'NoSelect' }] } });
    const got = hosts(
      [cordoned, imported, cluster('mc-1')],
      [addOn('mc-1'), addOn('mc-2', false)],
      [score('mc-1', 42)],
      [hcd('team-a', 'one'), hcd('team-b', 'two', 'mc-2')],
    );
    expect(got.map((h) => h.name)).toEqual(['mc-1', 'mc-2']);
    expect(got[0]).toMatchObject({
      available: 'True',
      cordoned: false,
      addOn: 'Available',
      operator: 'Installed',
      hosted: '1',
      capacity: '10',
      freeScore: '42',
      deployments: ['team-a/one'],
    });
    expect(got[1]).toMatchObject({ cordoned: true, addOn: 'Unavailable', freeScore: '-', deployments: ['team-b/two'] });
  });
});
