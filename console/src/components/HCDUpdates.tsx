// A HostedClusterDeployment's available updates, the conditional ones with
// their risks named, and an upgrade of the control plane to a recommended
// update the hub lists, patched as the signed-in user: the API server and
// the namespace's TenantPolicy decide, and their refusal is shown as it
// comes.
import * as React from 'react';
import { k8sPatch, useK8sModel } from '@openshift-console/dynamic-plugin-sdk';
import { Alert, Button } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { HCDModel } from '../models';
import type { HCD } from '../fleet';
import type { Explanation } from '../explain';
import { canUpgrade, updateRows, upgradePatch, type UpdateRow } from '../updates';
import { errorText, useT } from './common';

const Upgrade: React.FC<{ hcd: HCD; row: UpdateRow }> = ({ hcd, row }) => {
  const t = useT();
  const [model] = useK8sModel(HCDModel);
  const [state, setState] = React.useState<{ pending: boolean; error?: string; done?: boolean }>({ pending: false });
  const submit = async () => {
    if (!model) return;
    setState({ pending: true });
    try {
      await k8sPatch({ model, resource: hcd, data: upgradePatch(hcd, row.image) });
      setState({ pending: false, done: true });
    } catch (err) {
      setState({ pending: false, error: errorText(err) });
    }
  };
  return (
    <>
      <Button
        variant="secondary"
        size="sm"
        data-test={`upgrade-${row.version}`}
        isDisabled={state.pending || state.done || !model}
        isLoading={state.pending}
        onClick={() => void submit()}
      >
        {t('Upgrade control plane')}
      </Button>
      {state.done && (
        <span data-test={`upgraded-${row.version}`}> {t('requested {{version}}', { version: row.version })}</span>
      )}
      {state.error && (
        <Alert
          variant="danger"
          isInline
          isPlain
          title={t('Cannot upgrade to {{version}}', { version: row.version })}
          data-test={`upgrade-error-${row.version}`}
        >
          {state.error}
        </Alert>
      )}
    </>
  );
};

const why = (t: ReturnType<typeof useT>, row: UpdateRow): string => {
  if (!row.recommended)
    return t('risks: {{risks}} (a ReleaseRollout accepts them by name)', { risks: row.risks.join(', ') });
  if (row.published === false) return t('no ClusterImageSet on the hub publishes it');
  if (row.published === undefined) return t('the hub has not said whether it lists it');
  return '';
};

export const HCDUpdates: React.FC<{ hcd: HCD; updates?: Explanation['Updates'] }> = ({ hcd, updates }) => {
  const t = useT();
  const rows = updateRows(hcd, updates);
  if (rows.length === 0) return <p data-test="no-updates">{t('The hosted cluster reports no available updates.')}</p>;
  return (
    <Table aria-label={t('Available updates')} variant="compact" data-test="updates">
      <Thead>
        <Tr>
          <Th>{t('Version')}</Th>
          <Th>{t('Recommended')}</Th>
          <Th>{t('Upgrade')}</Th>
        </Tr>
      </Thead>
      <Tbody>
        {rows.map((r) => (
          <Tr key={r.version} data-test={`update-${r.version}`}>
            <Td dataLabel={t('Version')}>{r.version}</Td>
            <Td dataLabel={t('Recommended')}>
              {r.recommended ? t('yes') : t('no: {{risks}}', { risks: r.risks.join(', ') })}
            </Td>
            <Td dataLabel={t('Upgrade')}>{canUpgrade(r) ? <Upgrade hcd={hcd} row={r} /> : why(t, r)}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
};
