// "Why here, why not there?": the scheduler's own explanation of a
// HostedClusterDeployment, which the hub computes with its rights for a
// user the API server allows to get the deployment (a tenant may not read
// the management clusters it is weighed against). The hub's refusal is
// shown like the API server's.
import * as React from 'react';
import { consoleFetchJSON } from '@openshift-console/dynamic-plugin-sdk';
import { Button, CodeBlock, CodeBlockCode, Spinner } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { findCondition, type HCD } from '../fleet';
import { candidateRows, decision, explanationURL, type ExplanationAnswer } from '../explain';
import { LoadError, useT } from './common';

export interface ExplanationState {
  answer?: ExplanationAnswer;
  error?: unknown;
  loading: boolean;
  ask: () => void;
}

// useExplanation asks the hub once per page, again when the hub's
// decision changes (the Scheduled condition, the binding) and on ask(),
// not on every status write.
export const useExplanation = (hcd: HCD): ExplanationState => {
  const ns = hcd.metadata.namespace ?? '';
  const name = hcd.metadata.name ?? '';
  const [state, setState] = React.useState<{ answer?: ExplanationAnswer; error?: unknown; loading: boolean }>({
    loading: true,
  });
  const [asked, setAsked] = React.useState(0);
  const scheduled = findCondition(hcd.status?.conditions, 'Scheduled');
  const key = `${ns}/${name}/${hcd.status?.hostingCluster ?? ''}/${scheduled?.reason ?? ''}/${scheduled?.lastTransitionTime ?? ''}/${asked}`;
  React.useEffect(() => {
    let closed = false;
    setState((s) => ({ ...s, loading: true }));
    consoleFetchJSON(explanationURL(ns, name)).then(
      (answer: ExplanationAnswer) => !closed && setState({ answer, loading: false }),
      (error: unknown) => !closed && setState({ error, loading: false }),
    );
    return () => {
      closed = true;
    };
    // key holds ns and name and what makes the hub's answer change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  const ask = React.useCallback(() => setAsked((n) => n + 1), []);
  return { ...state, ask };
};

export const HCDExplanation: React.FC<{ state: ExplanationState }> = ({ state }) => {
  const t = useT();
  if (state.error) return <LoadError what={t("the scheduler's explanation")} error={state.error} />;
  if (!state.answer) return <Spinner aria-label={t('Asking the scheduler')} />;
  const x = state.answer.explanation;
  const rows = candidateRows(x);
  return (
    <div data-test="explanation">
      <p data-test="explanation-decision">{decision(x)}</p>
      {rows.length > 0 && (
        <Table aria-label={t('Candidates')} variant="compact" data-test="candidates">
          <Thead>
            <Tr>
              <Th>{t('Management cluster')}</Th>
              <Th>{t('Rank')}</Th>
              <Th>{t('Hosted / capacity')}</Th>
              <Th>{t('Why not there')}</Th>
            </Tr>
          </Thead>
          <Tbody>
            {rows.map((r) => (
              <Tr key={r.name} data-test={`candidate-${r.name}`}>
                <Td dataLabel={t('Management cluster')}>{r.name}</Td>
                <Td dataLabel={t('Rank')}>{r.rank > 0 ? r.rank : '-'}</Td>
                <Td dataLabel={t('Hosted / capacity')}>{r.load}</Td>
                <Td dataLabel={t('Why not there')}>{r.failures.length ? r.failures.join('; ') : t('fits')}</Td>
              </Tr>
            ))}
          </Tbody>
        </Table>
      )}
      <CodeBlock data-test="explanation-text">
        <CodeBlockCode>{state.answer.text}</CodeBlockCode>
      </CodeBlock>
      <Button variant="link" isInline onClick={state.ask} isDisabled={state.loading} data-test="explanation-refresh">
        {t('Ask again')}
      </Button>
    </div>
  );
};
