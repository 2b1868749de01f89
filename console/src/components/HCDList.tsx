// The HostedClusterDeployments of a namespace (or of all, for whoever may
// list them there): phase, host, version, imported ManagedCluster, key
// conditions and the first problem, as `kubectl hcpfleet status` lists them.
import * as React from 'react';
import { Link, useParams } from 'react-router';
import { PageSection, Spinner, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { HCDModel } from '../models';
import { phase, problem, version, type HCD } from '../fleet';
import { LoadError, useT, useWatch } from './common';

export const HCDTable: React.FC<{ hcds: HCD[] }> = ({ hcds }) => {
  const t = useT();
  return (
    <Table aria-label={t('HostedClusterDeployments')} variant="compact" data-test="hcds">
      <Thead>
        <Tr>
          <Th>{t('Name')}</Th>
          <Th>{t('Namespace')}</Th>
          <Th>{t('Phase')}</Th>
          <Th>{t('Host')}</Th>
          <Th>{t('Version')}</Th>
          <Th>{t('Imported as')}</Th>
          <Th>{t('Problem')}</Th>
        </Tr>
      </Thead>
      <Tbody>
        {hcds.map((h) => (
          <Tr key={`${h.metadata.namespace}/${h.metadata.name}`} data-test={`hcd-${h.metadata.name}`}>
            <Td dataLabel={t('Name')}>
              <Link to={`/hcpfleet/ns/${h.metadata.namespace}/hostedclusterdeployments/${h.metadata.name}`}>
                {h.metadata.name}
              </Link>
            </Td>
            <Td dataLabel={t('Namespace')}>{h.metadata.namespace}</Td>
            <Td dataLabel={t('Phase')}>{phase(h)}</Td>
            <Td dataLabel={t('Host')}>{h.status?.hostingCluster || '-'}</Td>
            <Td dataLabel={t('Version')}>{version(h) || '-'}</Td>
            <Td dataLabel={t('Imported as')}>{h.status?.managedCluster || '-'}</Td>
            <Td dataLabel={t('Problem')}>{problem(h)}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
};

const HCDList: React.FC = () => {
  const t = useT();
  // Route: /hcpfleet/ns/:ns/hostedclusterdeployments, or
  // /hcpfleet/all-namespaces/hostedclusterdeployments (no :ns).
  const { ns } = useParams();
  const [hcds, loaded, error] = useWatch<HCD[]>({
    groupVersionKind: HCDModel,
    isList: true,
    namespace: ns,
  });
  const sorted = React.useMemo(
    () =>
      [...(hcds ?? [])].sort((a, b) =>
        `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`),
      ),
    [hcds],
  );
  return (
    <PageSection>
      <Title headingLevel="h1">
        {ns ? t('HostedClusterDeployments in {{ns}}', { ns }) : t('HostedClusterDeployments')}
      </Title>
      {ns && (
        <Link to={`/hcpfleet/ns/${ns}/create-hostedclusterdeployment`} data-test="create-link">
          {t('Create HostedClusterDeployment')}
        </Link>
      )}
      {error ? (
        <LoadError
          what={ns ? t('HostedClusterDeployments in {{ns}}', { ns }) : t('HostedClusterDeployments in all namespaces')}
          error={error}
        />
      ) : !loaded ? (
        <Spinner aria-label={t('Loading')} />
      ) : sorted.length === 0 ? (
        <p data-test="empty">{t('No HostedClusterDeployments.')}</p>
      ) : (
        <HCDTable hcds={sorted} />
      )}
    </PageSection>
  );
};

export default HCDList;
