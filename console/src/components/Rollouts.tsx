// Fleet rollouts of a namespace (or of all, for whoever may list them
// there): ReleaseRollouts, moving hosted clusters to a release in waves,
// and HostedClusterExtensions, rolling objects out to the hosted clusters'
// control planes, each with its progress and where each hosted cluster
// stands. Read as the user: a tenant sees its namespace's, and the API
// server's refusal elsewhere.
import * as React from 'react';
import { useParams } from 'react-router';
import { useK8sWatchResource } from '@openshift-console/dynamic-plugin-sdk';
import { PageSection, Progress, Spinner, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { HostedClusterExtensionModel, ReleaseRolloutModel } from '../models';
import {
  extensionProgress,
  percent,
  rolloutProgress,
  type HostedClusterExtension,
  type Progress as P,
  type ReleaseRollout,
} from '../fleet';
import { LoadError } from './common';

const key = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace}/${o.metadata.name}`;
const byKey = <T extends { metadata: { namespace?: string; name?: string } }>(xs: T[]) =>
  [...(xs ?? [])].sort((a, b) => key(a).localeCompare(key(b)));

const Bar: React.FC<{ p: P; label: string; what: string }> = ({ p, label, what }) => (
  <Progress
    value={percent(p)}
    title={label}
    label={`${p.value} of ${p.of} ${what}`}
    measureLocation="outside"
    size="sm"
    aria-label={label}
  />
);

export const RolloutTable: React.FC<{ rollouts: ReleaseRollout[] }> = ({ rollouts }) => (
  <Table aria-label="ReleaseRollouts" variant="compact" data-test="rollouts">
    <Thead>
      <Tr>
        <Th>Name</Th>
        <Th>Namespace</Th>
        <Th>Release</Th>
        <Th>Progress</Th>
        <Th>Wave</Th>
        <Th>State</Th>
        <Th>Hosted clusters</Th>
      </Tr>
    </Thead>
    <Tbody>
      {rollouts.map((rr) => {
        const p = rolloutProgress(rr);
        const s = rr.status ?? {};
        const counts = [
          ['pending', s.pending],
          ['upgrading', s.upgrading],
          ['blocked', s.blocked],
          ['failed', s.failed],
        ]
          .filter(([, n]) => n)
          .map(([w, n]) => `${n} ${w}`)
          .join(', ');
        return (
          <Tr key={key(rr)} data-test={`rollout-${rr.metadata.name}`}>
            <Td dataLabel="Name">{rr.metadata.name}</Td>
            <Td dataLabel="Namespace">{rr.metadata.namespace}</Td>
            <Td dataLabel="Release">{rr.spec?.release?.image}</Td>
            <Td dataLabel="Progress">
              <Bar p={p} label={`${rr.metadata.name} progress`} what="done" />
              {counts}
            </Td>
            <Td dataLabel="Wave">{s.waves ? `${s.wave ?? 0} of ${s.waves}` : '-'}</Td>
            <Td dataLabel="State" data-test={`rollout-state-${rr.metadata.name}`}>
              {p.state}
              {p.message && <div>{p.message}</div>}
            </Td>
            <Td dataLabel="Hosted clusters">
              {(s.hostedClusters ?? []).map((h) => (
                <div key={h.name} title={h.message}>
                  {h.name}: {h.state}
                  {h.reason && h.reason !== h.state ? ` (${h.reason})` : ''} · wave {h.wave}
                </div>
              ))}
            </Td>
          </Tr>
        );
      })}
    </Tbody>
  </Table>
);

export const ExtensionTable: React.FC<{ extensions: HostedClusterExtension[] }> = ({ extensions }) => (
  <Table aria-label="HostedClusterExtensions" variant="compact" data-test="extensions">
    <Thead>
      <Tr>
        <Th>Name</Th>
        <Th>Namespace</Th>
        <Th>Revision</Th>
        <Th>Progress</Th>
        <Th>State</Th>
        <Th>Hosted clusters</Th>
      </Tr>
    </Thead>
    <Tbody>
      {extensions.map((hce) => {
        const p = extensionProgress(hce);
        const s = hce.status ?? {};
        return (
          <Tr key={key(hce)} data-test={`extension-${hce.metadata.name}`}>
            <Td dataLabel="Name">{hce.metadata.name}</Td>
            <Td dataLabel="Namespace">{hce.metadata.namespace}</Td>
            <Td dataLabel="Revision">{s.revision ?? '-'}</Td>
            <Td dataLabel="Progress">
              <Bar p={p} label={`${hce.metadata.name} progress`} what="available" />
              {s.updated ?? 0} updated{s.failed ? `, ${s.failed} failed` : ''}
              {hce.spec?.strategy?.paused ? ', paused' : ''}
            </Td>
            <Td dataLabel="State" data-test={`extension-state-${hce.metadata.name}`}>
              {p.state}
              {p.message && <div>{p.message}</div>}
            </Td>
            <Td dataLabel="Hosted clusters">
              {(s.hostedClusters ?? []).map((h) => (
                <div key={h.name} title={h.failure?.message}>
                  {h.name}: {h.state ?? 'Pending'}
                  {h.currentPhase ? ` (phase ${h.currentPhase})` : ''}
                  {h.revision ? ` · revision ${h.revision}` : ''}
                </div>
              ))}
            </Td>
          </Tr>
        );
      })}
    </Tbody>
  </Table>
);

const Section = <T,>({
  title,
  what,
  data,
  loaded,
  error,
  none,
  children,
}: {
  title: string;
  what: string;
  data: T[];
  loaded: boolean;
  error: unknown;
  none: string;
  children: (xs: T[]) => React.ReactNode;
}) => (
  <div data-test={`section-${what}`}>
    <Title headingLevel="h2">{title}</Title>
    {error ? (
      <LoadError what={what} error={error} />
    ) : !loaded ? (
      <Spinner aria-label={`Loading ${what}`} />
    ) : data.length === 0 ? (
      <p data-test={`none-${what}`}>{none}</p>
    ) : (
      children(data)
    )}
  </div>
);

const Rollouts: React.FC = () => {
  // Route: /hcpfleet/ns/:ns/rollouts, or /hcpfleet/all-namespaces/rollouts.
  const { ns } = useParams();
  const [rollouts, rrLoaded, rrError] = useK8sWatchResource<ReleaseRollout[]>({
    groupVersionKind: ReleaseRolloutModel,
    isList: true,
    namespace: ns,
  });
  const [extensions, hceLoaded, hceError] = useK8sWatchResource<HostedClusterExtension[]>({
    groupVersionKind: HostedClusterExtensionModel,
    isList: true,
    namespace: ns,
  });
  return (
    <PageSection>
      <Title headingLevel="h1">Rollouts{ns ? ` in ${ns}` : ''}</Title>
      <Section
        title="Release rollouts"
        what="releaserollouts"
        data={byKey(rollouts)}
        loaded={rrLoaded}
        error={rrError}
        none="No ReleaseRollouts."
      >
        {(xs) => <RolloutTable rollouts={xs} />}
      </Section>
      <Section
        title="Hosted cluster extensions"
        what="hostedclusterextensions"
        data={byKey(extensions)}
        loaded={hceLoaded}
        error={hceError}
        none="No HostedClusterExtensions."
      >
        {(xs) => <ExtensionTable extensions={xs} />}
      </Section>
    </PageSection>
  );
};

export default Rollouts;
