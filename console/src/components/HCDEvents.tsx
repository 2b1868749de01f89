// The Events about one HostedClusterDeployment (involvedObject: the HCD),
// newest first: what the hub's scheduler, delivery and importer did with
// it. Read as the user, like everything else: a reader without access to
// the namespace's Events sees the API server's refusal.
import * as React from 'react';
import { Label, Spinner } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { EventModel } from '../models';
import { eventFieldSelector, eventTime, sortEvents, type HCD, type K8sEvent } from '../fleet';
import { LoadError, useT, useWatch } from './common';

export const HCDEvents: React.FC<{ hcd: HCD }> = ({ hcd }) => {
  const t = useT();
  const [events, loaded, error] = useWatch<K8sEvent[]>({
    groupVersionKind: EventModel,
    namespace: hcd.metadata.namespace,
    isList: true,
    fieldSelector: eventFieldSelector(hcd),
  });
  if (error) return <LoadError what={t('Events')} error={error} />;
  if (!loaded) return <Spinner aria-label={t('Loading events')} size="md" />;
  if (events.length === 0) return <p data-test="events-none">{t('No events.')}</p>;
  return (
    <Table aria-label={t('Events')} variant="compact" data-test="events">
      <Thead>
        <Tr>
          <Th>{t('Last seen')}</Th>
          <Th>{t('Type')}</Th>
          <Th>{t('Reason')}</Th>
          <Th>{t('Message')}</Th>
          <Th>{t('Count')}</Th>
          <Th>{t('From')}</Th>
        </Tr>
      </Thead>
      <Tbody>
        {sortEvents(events).map((e) => (
          <Tr key={e.metadata.uid ?? e.metadata.name} data-test={`event-${e.reason}`}>
            <Td dataLabel={t('Last seen')}>{eventTime(e)}</Td>
            <Td dataLabel={t('Type')}>
              <Label color={e.type === 'Warning' ? 'orange' : 'blue'} isCompact>
                {e.type}
              </Label>
            </Td>
            <Td dataLabel={t('Reason')}>{e.reason}</Td>
            <Td dataLabel={t('Message')}>{e.message}</Td>
            <Td dataLabel={t('Count')}>{e.count ?? 1}</Td>
            <Td dataLabel={t('From')}>{e.source?.component || e.reportingComponent || '-'}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
};
