import '@testing-library/jest-dom';
import * as React from 'react';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { consoleFetchJSON } from '@openshift-console/dynamic-plugin-sdk';
import { HCDExplanation, useExplanation } from '../components/HCDExplanation';
import type { HCD } from '../fleet';
import { candidateRows, decision, explanationURL, type Explanation } from '../explain';
import { hcd } from './fixtures';

jest.mock('@openshift-console/dynamic-plugin-sdk', () => ({ consoleFetchJSON: jest.fn() }));
const fetchJSON = consoleFetchJSON as unknown as jest.Mock;

// What the hub's endpoint answers (pkg/fleetview.Explanation's JSON):
// mc-1 chosen, mc-2 full and cordoned.
const explanation = (extra: Partial<Explanation> = {}): Explanation => ({
  Namespace: 'team-a',
  Name: 'one',
  Placement: 'hosts',
  Pinned: '',
  BoundTo: 'mc-1',
  Reason: '',
  Message: '',
  Recovery: '',
  Untolerated: null,
  Scheduling: {
    Strategy: 'Spread',
    Decision: { Cluster: 'mc-1' },
    RunnerUp: '',
    Overtake: 0,
    Candidates: [
      {
        Candidate: { Name: 'mc-1', Load: 3, Capacity: 80 },
        Filters: [
          { Filter: 'cordoned', Passed: true, Detail: '' },
          { Filter: 'full', Passed: true, Detail: '3/80' },
        ],
        Rank: 1,
      },
      {
        Candidate: { Name: 'mc-2', Load: 2, Capacity: 2 },
        Filters: [
          { Filter: 'cordoned', Passed: false, Detail: 'the fleet admin cordoned it' },
          { Filter: 'full', Passed: false, Detail: '2/2' },
        ],
        Rank: 0,
      },
    ],
  },
  ...extra,
});

beforeEach(() => fetchJSON.mockReset());

describe('explanation view functions', () => {
  it('asks the hub through the ConsolePlugin proxy, names escaped', () => {
    expect(explanationURL('team-a', 'one')).toBe(
      '/api/proxy/plugin/hcp-fleet/hub/api/v1/namespaces/team-a/hostedclusterdeployments/one/explanation',
    );
    expect(explanationURL('team-a', 'a/b')).toContain('/hostedclusterdeployments/a%2Fb/explanation');
  });

  it('says the decision as explain does', () => {
    expect(decision(explanation())).toBe(
      'Bound to mc-1, which the scheduler would choose again now (strategy Spread).',
    );
    expect(decision(explanation({ BoundTo: '' }))).toBe('The scheduler chooses mc-1 (strategy Spread).');
    expect(decision(explanation({ BoundTo: 'mc-3' }))).toContain('Bound to mc-3; scheduled now it would go to mc-1');
    const none = explanation({ BoundTo: '' });
    none.Scheduling.Decision.Cluster = '';
    expect(decision(none)).toContain('No management cluster fits');
    expect(
      decision(
        explanation({
          Scheduling: null,
          BoundTo: '',
          Reason: 'NoPlacementDecisions',
          Message: 'Placement team-a/hosts selects no cluster',
        }),
      ),
    ).toBe('No candidates: NoPlacementDecisions: Placement team-a/hosts selects no cluster');
    expect(decision(explanation({ Scheduling: null, Recovery: 'its binding is recovered' }))).toBe(
      'its binding is recovered',
    );
  });

  it('lists each candidate with the filters it fails', () => {
    expect(candidateRows(explanation())).toEqual([
      { name: 'mc-1', rank: 1, load: '3 / 80', failures: [] },
      { name: 'mc-2', rank: 0, load: '2 / 2', failures: ['cordoned: the fleet admin cordoned it', 'full: 2/2'] },
    ]);
    expect(candidateRows(explanation({ Scheduling: null }))).toEqual([]);
  });
});

const Explained: React.FC<{ hcd: HCD }> = ({ hcd }) => <HCDExplanation state={useExplanation(hcd)} />;

describe('HCDExplanation', () => {
  it("shows the hub's decision, the candidates and explain's text", async () => {
    fetchJSON.mockResolvedValue({
      explanation: explanation(),
      text: 'HostedClusterDeployment team-a/one\nDECISION: mc-1',
    });
    render(<Explained hcd={hcd('team-a', 'one')} />);
    expect(await screen.findByTestId('explanation-decision')).toHaveTextContent('Bound to mc-1');
    expect(fetchJSON).toHaveBeenCalledWith(explanationURL('team-a', 'one'));
    expect(within(screen.getByTestId('candidate-mc-1')).getByText('fits')).toBeInTheDocument();
    expect(
      within(screen.getByTestId('candidate-mc-2')).getByText('cordoned: the fleet admin cordoned it; full: 2/2'),
    ).toBeInTheDocument();
    expect(screen.getByTestId('explanation-text')).toHaveTextContent('DECISION: mc-1');
  });

  it('asks again on request', async () => {
    fetchJSON.mockResolvedValue({ explanation: explanation(), text: '' });
    render(<Explained hcd={hcd('team-a', 'one')} />);
    await screen.findByTestId('explanation-decision');
    fireEvent.click(screen.getByTestId('explanation-refresh'));
    await waitFor(() => expect(fetchJSON).toHaveBeenCalledTimes(2));
  });

  it("shows the hub's refusal", async () => {
    fetchJSON.mockRejectedValue({
      message: 'Forbidden',
      code: 403,
      json: {
        message:
          'hostedclusterdeployments.hcpfleet.io "one" is forbidden: User "bob" cannot get resource "hostedclusterdeployments"',
      },
    });
    render(<Explained hcd={hcd('team-a', 'one')} />);
    expect(await screen.findByTestId('load-error')).toHaveTextContent(
      'User "bob" cannot get resource "hostedclusterdeployments"',
    );
    expect(screen.queryByTestId('candidates')).toBeNull();
  });
});
