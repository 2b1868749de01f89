// Fleet rollouts of a namespace (or of all, for whoever may list them
// there): ReleaseRollouts, moving hosted clusters to a release in waves,
// and HostedClusterExtensions, rolling objects out to the hosted clusters'
// control planes, each with its progress and where each hosted cluster
// stands. Read as the user: a tenant sees its namespace's, and the API
// server's refusal elsewhere.
import * as React from 'react';
import { useParams } from 'react-router';
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
import { LoadError, useT, useWatch } from './common';

const key = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace}/${o.metadata.name}`;
const byKey = <T extends { metadata: { namespace?: string; name?: string } }>(xs: T[]) =>
  [...(xs ?? [])].sort((a, b) => key(a).localeCompare(key(b)));

// label and valueText are translated by the caller.
const Bar: React.FC<{ p: P; label: string; valueText: string }> = ({ p, label, valueText }) => (
  <Progress value={percent(p)} title={label} label={valueText} measureLocation="outside" size="sm" aria-label={label} />
);

export const RolloutTable: React.FC<{ rollouts: ReleaseRollout[] }> = ({ rollouts }) => {
  const t = useT();
  return (
    <Table aria-label={t('ReleaseRollouts')} variant="compact" data-test="rollouts">
      <Thead>
        <Tr>
          <Th>{t('Name')}</Th>
          <Th>{t('Namespace')}</Th>
          <Th>{t('Release')}</Th>
          <Th>{t('Progress')}</Th>
          <Th>{t('Wave')}</Th>
          <Th>{t('State')}</Th>
          <Th>{t('Hosted clusters')}</Th>
        </Tr>
      </Thead>
      <Tbody>
        {rollouts.map((rr) => {
          const p = rolloutProgress(rr);
          const s = rr.status ?? {};
          const counts = [
            s.pending ? t('{{n}} pending', { n: s.pending }) : '',
            s.upgrading ? t('{{n}} upgrading', { n: s.upgrading }) : '',
            s.blocked ? t('{{n}} blocked', { n: s.blocked }) : '',
            s.failed ? t('{{n}} failed', { n: s.failed }) : '',
          ]
            .filter((c) => c)
            .join(', ');
          return (
            <Tr key={key(rr)} data-test={`rollout-${rr.metadata.name}`}>
              <Td dataLabel={t('Name')}>{rr.metadata.name}</Td>
              <Td dataLabel={t('Namespace')}>{rr.metadata.namespace}</Td>
              <Td dataLabel={t('Release')}>{rr.spec?.release?.image}</Td>
              <Td dataLabel={t('Progress')}>
                <Bar
                  p={p}
                  label={t('{{name}} progress', { name: rr.metadata.name })}
                  valueText={t('{{value}} of {{of}} done', { value: p.value, of: p.of })}
                />
                {counts}
              </Td>
              <Td dataLabel={t('Wave')}>
                {s.waves ? t('{{wave}} of {{waves}}', { wave: s.wave ?? 0, waves: s.waves }) : '-'}
              </Td>
              <Td dataLabel={t('State')} data-test={`rollout-state-${rr.metadata.name}`}>
                {p.state}
                {p.message && <div>{p.message}</div>}
              </Td>
              <Td dataLabel={t('Hosted clusters')}>
                {(s.hostedClusters ?? []).map((h) => (
                  <div key={h.name} title={h.message}>
                    {h.name}: {h.state}
                    {h.reason && h.reason !== h.state ? ` (${h.reason})` : ''} · {t('wave {{wave}}', { wave: h.wave })}
                  </div>
                ))}
              </Td>
            </Tr>
          );
        })}
      </Tbody>
    </Table>
  );
};

export const ExtensionTable: React.FC<{ extensions: HostedClusterExtension[] }> = ({ extensions }) => {
  const t = useT();
  return (
    <Table aria-label={t('HostedClusterExtensions')} variant="compact" data-test="extensions">
      <Thead>
        <Tr>
          <Th>{t('Name')}</Th>
          <Th>{t('Namespace')}</Th>
          <Th>{t('Revision')}</Th>
          <Th>{t('Progress')}</Th>
          <Th>{t('State')}</Th>
          <Th>{t('Hosted clusters')}</Th>
        </Tr>
      </Thead>
      <Tbody>
        {extensions.map((hce) => {
          const p = extensionProgress(hce);
          const s = hce.status ?? {};
          return (
            <Tr key={key(hce)} data-test={`extension-${hce.metadata.name}`}>
              <Td dataLabel={t('Name')}>{hce.metadata.name}</Td>
              <Td dataLabel={t('Namespace')}>{hce.metadata.namespace}</Td>
              <Td dataLabel={t('Revision')}>{s.revision ?? '-'}</Td>
              <Td dataLabel={t('Progress')}>
                <Bar
                  p={p}
                  label={t('{{name}} progress', { name: hce.metadata.name })}
                  valueText={t('{{value}} of {{of}} available', { value: p.value, of: p.of })}
                />
                {t('{{n}} updated', { n: s.updated ?? 0 })}
                {s.failed ? `, ${t('{{n}} failed', { n: s.failed })}` : ''}
                {hce.spec?.strategy?.paused ? `, ${t('paused')}` : ''}
              </Td>
              <Td dataLabel={t('State')} data-test={`extension-state-${hce.metadata.name}`}>
                {p.state}
                {p.message && <div>{p.message}</div>}
              </Td>
              <Td dataLabel={t('Hosted clusters')}>
                {(s.hostedClusters ?? []).map((h) => (
                  <div key={h.name} title={h.failure?.message}>
                    {h.name}: {h.state ?? 'Pending'}
                    {h.currentPhase ? ` (${t('phase {{phase}}', { phase: h.currentPhase })})` : ''}
                    {h.revision ? ` · ${t('revision {{revision}}', { revision: h.revision })}` : ''}
                  </div>
                ))}
              </Td>
            </Tr>
          );
        })}
      </Tbody>
    </Table>
  );
};

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
      <Spinner aria-label={title} />
    ) : data.length === 0 ? (
      <p data-test={`none-${what}`}>{none}</p>
    ) : (
      children(data)
    )}
  </div>
);

const Rollouts: React.FC = () => {
  // Route: /hcpfleet/ns/:ns/rollouts, or /hcpfleet/all-namespaces/rollouts.
  const t = useT();
  const { ns } = useParams();
  const [rollouts, rrLoaded, rrError] = useWatch<ReleaseRollout[]>({
    groupVersionKind: ReleaseRolloutModel,
    isList: true,
    namespace: ns,
  });
  const [extensions, hceLoaded, hceError] = useWatch<HostedClusterExtension[]>({
    groupVersionKind: HostedClusterExtensionModel,
    isList: true,
    namespace: ns,
  });
  return (
    <PageSection>
      <Title headingLevel="h1">{ns ? t('Rollouts in {{ns}}', { ns }) : t('Rollouts')}</Title>
      <Section
        title={t('Release rollouts')}
        what="releaserollouts"
        data={byKey(rollouts)}
        loaded={rrLoaded}
        error={rrError}
        none={t('No ReleaseRollouts.')}
      >
        {(xs) => <RolloutTable rollouts={xs} />}
      </Section>
      <Section
        title={t('Hosted cluster extensions')}
        what="hostedclusterextensions"
        data={byKey(extensions)}
        loaded={hceLoaded}
        error={hceError}
        none={t('No HostedClusterExtensions.')}
      >
        {(xs) => <ExtensionTable extensions={xs} />}
      </Section>
    </PageSection>
  );
};

export default Rollouts;
