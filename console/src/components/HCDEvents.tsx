// The Events about one HostedClusterDeployment (involvedObject: the HCD),
// newest first: what the hub's scheduler, delivery and importer did with
// it. Read as the user, like everything else: a reader without access to
// the namespace's Events sees the API server's refusal.
import * as React from 'react';
import { useK8sWatchResource } from '@openshift-console/dynamic-plugin-sdk';
import { Label, Spinner } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { EventModel } from '../models';
import { eventFieldSelector, eventTime, sortEvents, type HCD, type K8sEvent } from '../fleet';
import { LoadError } from './common';

export const HCDEvents: React.FC<{ hcd: HCD }> = ({ hcd }) => {
  const [events, loaded, error] = useK8sWatchResource<K8sEvent[]>({
    groupVersionKind: EventModel,
    namespace: hcd.metadata.namespace,
    isList: true,
    fieldSelector: eventFieldSelector(hcd),
  });
  if (error) return <LoadError what="Events" error={error} />;
  if (!loaded) return <Spinner aria-label="Loading events" size="md" />;
  if (events.length === 0) return <p data-test="events-none">No events.</p>;
  return (
    <Table aria-label="Events" variant="compact" data-test="events">
      <Thead>
        <Tr>
          <Th>Last seen</Th>
          <Th>Type</Th>
          <Th>Reason</Th>
          <Th>Message</Th>
          <Th>Count</Th>
          <Th>From</Th>
        </Tr>
      </Thead>
      <Tbody>
        {sortEvents(events).map((e) => (
          <Tr key={e.metadata.uid ?? e.metadata.name} data-test={`event-${e.reason}`}>
            <Td dataLabel="Last seen">{eventTime(e)}</Td>
            <Td dataLabel="Type">
              <Label color={e.type === 'Warning' ? 'orange' : 'blue'} isCompact>
                {e.type}
              </Label>
            </Td>
            <Td dataLabel="Reason">{e.reason}</Td>
            <Td dataLabel="Message">{e.message}</Td>
            <Td dataLabel="Count">{e.count ?? 1}</Td>
            <Td dataLabel="From">{e.source?.component || e.reportingComponent || '-'}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
};
