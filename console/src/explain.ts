// The scheduler's explanation of one HostedClusterDeployment, as the hub's
// console endpoint serves it (pkg/hosting/hub/consoleapi, reached through
// the ConsolePlugin's proxy alias "hub" with the user's token): the JSON of
// pkg/fleetview.Explanation (Go field names) and the text of `kubectl
// hcpfleet explain hcd`, computed by the same code.

// The ConsolePlugin's proxy (manifests/console/93-consoleplugin.yaml):
// /api/proxy/plugin/<plugin>/<alias>/<path on the hub's endpoint>.
export const hubProxy = '/api/proxy/plugin/hcp-fleet/hub';

// consoleapi.ExplanationPath.
export const explanationURL = (namespace: string, name: string): string =>
  `${hubProxy}/api/v1/namespaces/${encodeURIComponent(namespace)}/hostedclusterdeployments/${encodeURIComponent(name)}/explanation`;

// scheduling.FilterResult, Evaluation, Candidate (the fields shown).
export interface FilterResult {
  Filter: string;
  Passed: boolean;
  Detail: string;
}
export interface Evaluation {
  Candidate: { Name: string; Load: number; Capacity: number; Cordoned?: boolean };
  Filters: FilterResult[] | null;
  Rank: number;
}

// fleetview.Explanation (with scheduling.Explanation inside).
export interface Explanation {
  Namespace: string;
  Name: string;
  Placement: string;
  Pinned: string;
  BoundTo: string;
  Reason: string;
  Message: string;
  Recovery: string;
  Untolerated: string[] | null;
  // fleetview.Updates: the available updates a ClusterImageSet on the hub
  // publishes (mayGoTo), those none does, the conditional ones with their
  // risks; null when the hosted cluster reports none.
  Updates?: { mayGoTo?: string[]; unpublished?: string[]; conditional?: string[]; imageSetsUnknown?: string } | null;
  Scheduling: {
    Strategy: string;
    Decision: { Cluster: string };
    Candidates: Evaluation[] | null;
    RunnerUp: string;
    Overtake: number;
  } | null;
}

export interface ExplanationAnswer {
  explanation: Explanation;
  text: string;
}

// decision is the explanation's verdict in one sentence, as
// RenderExplanation's DECISION line says it.
export const decision = (x: Explanation): string => {
  if (x.Recovery) return x.Recovery;
  const s = x.Scheduling;
  if (!s) return `No candidates: ${x.Reason}: ${x.Message}`;
  const c = s.Decision.Cluster;
  if (!c) return 'No management cluster fits: each candidate fails a filter below.';
  if (!x.BoundTo) return `The scheduler chooses ${c} (strategy ${s.Strategy}).`;
  if (x.BoundTo === c) return `Bound to ${c}, which the scheduler would choose again now (strategy ${s.Strategy}).`;
  return `Bound to ${x.BoundTo}; scheduled now it would go to ${c}: the inputs changed since, and a binding never moves.`;
};

export interface CandidateRow {
  name: string;
  // rank: 1 is chosen; 0 when a filter rejects it.
  rank: number;
  load: string;
  // why not there: the failing filters with what each saw.
  failures: string[];
}

// candidateRows are the candidates in the scheduler's name order, each
// with the filters it fails.
export const candidateRows = (x: Explanation): CandidateRow[] =>
  (x.Scheduling?.Candidates ?? []).map((e) => ({
    name: e.Candidate.Name,
    rank: e.Rank,
    load: e.Candidate.Capacity > 0 ? `${e.Candidate.Load} / ${e.Candidate.Capacity}` : `${e.Candidate.Load}`,
    failures: (e.Filters ?? []).filter((f) => !f.Passed).map((f) => `${f.Filter}: ${f.Detail}`),
  }));
