// A HostedClusterDeployment's node pools: what the spec asks for, what the
// status reports, and a scale action that patches spec.nodePools[].replicas
// as the signed-in user through the console's proxy. The page does not
// decide who may scale or to what: the API server's answer (RBAC, the
// CRD's validation) is shown as it comes.
import * as React from 'react';
import { k8sPatch, useK8sModel } from '@openshift-console/dynamic-plugin-sdk';
import { Alert, Button, TextInput } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { HCDModel } from '../models';
import { nodePoolRows, parseReplicas, scalePatch, type HCD, type NodePoolRow } from '../fleet';
import { errorText, useT } from './common';

const Scale: React.FC<{ hcd: HCD; row: NodePoolRow }> = ({ hcd, row }) => {
  const t = useT();
  const [model] = useK8sModel(HCDModel);
  const [text, setText] = React.useState(String(row.desired ?? ''));
  const [state, setState] = React.useState<{ pending: boolean; error?: string; done?: number }>({ pending: false });
  React.useEffect(() => setText(String(row.desired ?? '')), [row.desired]);
  const replicas = parseReplicas(text);
  const submit = async () => {
    if (replicas === undefined || !model) return;
    setState({ pending: true });
    try {
      await k8sPatch({ model, resource: hcd, data: scalePatch(row, replicas) });
      setState({ pending: false, done: replicas });
    } catch (err) {
      setState({ pending: false, error: errorText(err) });
    }
  };
  return (
    <>
      <TextInput
        aria-label={t('Replicas of {{pool}}', { pool: row.name })}
        data-test={`scale-input-${row.name}`}
        value={text}
        onChange={(_e, v) => setText(v)}
        validated={replicas === undefined ? 'error' : 'default'}
        style={{ width: '6em', display: 'inline-block' }}
      />{' '}
      <Button
        variant="secondary"
        size="sm"
        data-test={`scale-${row.name}`}
        isDisabled={replicas === undefined || replicas === row.desired || state.pending || !model}
        isLoading={state.pending}
        onClick={() => void submit()}
      >
        {t('Scale')}
      </Button>
      {state.done !== undefined && (
        <span data-test={`scaled-${row.name}`}> {t('requested {{replicas}}', { replicas: state.done })}</span>
      )}
      {state.error && (
        <Alert
          variant="danger"
          isInline
          isPlain
          title={t('Cannot scale {{pool}}', { pool: row.name })}
          data-test={`scale-error-${row.name}`}
        >
          {state.error}
        </Alert>
      )}
    </>
  );
};

export const NodePools: React.FC<{ hcd: HCD }> = ({ hcd }) => {
  const t = useT();
  return (
    <Table aria-label={t('Node pools')} variant="compact" data-test="nodepools">
      <Thead>
        <Tr>
          <Th>{t('Name')}</Th>
          <Th>{t('Ready / replicas')}</Th>
          <Th>{t('Desired')}</Th>
          <Th>{t('Scale')}</Th>
        </Tr>
      </Thead>
      <Tbody>
        {nodePoolRows(hcd).map((row) => (
          <Tr key={row.name} data-test={`nodepool-${row.name}`}>
            <Td dataLabel={t('Name')}>{row.name}</Td>
            <Td dataLabel={t('Ready / replicas')}>
              {row.ready} / {row.replicas}
            </Td>
            <Td dataLabel={t('Desired')}>
              {row.autoscaling
                ? t('autoscaling {{min}}–{{max}}', { min: row.autoscaling.min ?? '?', max: row.autoscaling.max ?? '?' })
                : (row.desired ?? '-')}
            </Td>
            <Td dataLabel={t('Scale')}>{row.index >= 0 && !row.autoscaling ? <Scale hcd={hcd} row={row} /> : '-'}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
};
