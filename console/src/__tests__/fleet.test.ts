import {
  extensionProgress,
  percent,
  rolloutProgress,
  eventFieldSelector,
  hosts,
  nodePoolRows,
  parseReplicas,
  phase,
  problem,
  scalePatch,
  sortEvents,
  version,
} from '../fleet';
import { addOn, cluster, event, extension, hcd, rollout, score } from './fixtures';

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
    expect(
      phase({ ...h, spec: { deletionPolicy: 'Orphan' }, metadata: { ...h.metadata, deletionTimestamp: 'x' } }),
    ).toBe('Orphaning');
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
    const imported = cluster('team-a-one', {
      metadata: { name: 'team-a-one', labels: { 'hcpfleet.io/hcd-name': 'one' } },
    });
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

describe('node pools', () => {
  it('joins the spec with the status, in the spec order, and keeps pools only the status knows', () => {
    const h = hcd('a', 'b');
    h.status.nodePools.push({ name: 'orphan', replicas: 1, readyReplicas: 1 });
    expect(nodePoolRows(h)).toEqual([
      { name: 'b-workers', index: 0, desired: 2, autoscaling: undefined, replicas: 2, ready: 1 },
      { name: 'b-auto', index: 1, desired: undefined, autoscaling: { min: 1, max: 3 }, replicas: 0, ready: 0 },
      { name: 'orphan', index: -1, replicas: 1, ready: 1 },
    ]);
  });
  it('scales with a patch that fails if the pools moved', () => {
    const row = nodePoolRows(hcd('a', 'b'))[1];
    expect(scalePatch(row, 4)).toEqual([
      { op: 'test', path: '/spec/nodePools/1/name', value: 'b-auto' },
      { op: 'add', path: '/spec/nodePools/1/spec/replicas', value: 4 },
    ]);
  });
  it('takes whole numbers of nodes only', () => {
    expect(parseReplicas(' 3 ')).toBe(3);
    expect(parseReplicas('0')).toBe(0);
    for (const bad of ['', '-1', '1.5', '1e3', 'x', '9999999']) expect(parseReplicas(bad)).toBeUndefined();
  });
});

describe('events', () => {
  it('selects the events of this deployment by kind, name and UID', () => {
    const h = hcd('a', 'b');
    expect(eventFieldSelector(h)).toBe(
      'involvedObject.kind=HostedClusterDeployment,involvedObject.name=b,involvedObject.uid=uid-a-b',
    );
    expect(eventFieldSelector({ ...h, metadata: { name: 'b' } })).toBe(
      'involvedObject.kind=HostedClusterDeployment,involvedObject.name=b',
    );
  });
  it('puts the newest first', () => {
    const old = event('a', 'b', 'Old', '2026-01-01T00:00:00Z');
    const recent = { ...event('a', 'b', 'New', ''), eventTime: '2026-02-01T00:00:00Z' };
    expect(sortEvents([old, recent]).map((e) => e.reason)).toEqual(['New', 'Old']);
  });
});

describe('rollouts', () => {
  it('counts done of selected and takes the state from the conditions', () => {
    const rr = rollout('a', 'r');
    expect(rolloutProgress(rr)).toEqual({
      value: 1,
      of: 4,
      state: 'WaveInProgress',
      reason: 'WaveInProgress',
      message: 'wave 1 of 3',
    });
    expect(percent(rolloutProgress(rr))).toBe(25);
    rr.status.conditions = [{ type: 'RolloutCompleted', status: 'True', reason: 'Completed', message: 'all done' }];
    expect(rolloutProgress(rr).state).toBe('Completed');
    expect(rolloutProgress({ metadata: { name: 'new' } })).toEqual({
      value: 0,
      of: 0,
      state: 'Pending',
      reason: '',
      message: '',
    });
    expect(percent(rolloutProgress({ metadata: { name: 'new' } }))).toBe(0);
  });
  it("puts an extension's Degraded over Progressing and Available", () => {
    const hce = extension('a', 'e');
    expect(extensionProgress(hce)).toMatchObject({ value: 1, of: 2, state: 'Degraded', reason: 'ProbeFailed' });
    hce.status.conditions = [{ type: 'Available', status: 'True', reason: 'AllAvailable' }];
    expect(extensionProgress(hce).state).toBe('Available');
    hce.status.conditions = [{ type: 'Available', status: 'False', reason: 'NotAllAvailable' }];
    expect(extensionProgress(hce).state).toBe('Not Available');
  });
});
