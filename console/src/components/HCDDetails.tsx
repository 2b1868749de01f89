// One HostedClusterDeployment: phase, host, version, the imported
// ManagedCluster, the admin kubeconfig Secret's name (never its data), node
// pools and every condition with its reason and message, which is where
// hcp-fleet says what is wrong and what to do.
import * as React from 'react';
import { useParams } from 'react-router';
import { useK8sWatchResource } from '@openshift-console/dynamic-plugin-sdk';
import {
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
  PageSection,
  Spinner,
  Title,
} from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { HCDModel } from '../models';
import { phase, version, type HCD } from '../fleet';
import { ConditionLabel, LoadError } from './common';

const Item: React.FC<{ term: string; children: React.ReactNode }> = ({ term, children }) => (
  <DescriptionListGroup>
    <DescriptionListTerm>{term}</DescriptionListTerm>
    <DescriptionListDescription data-test={`field-${term}`}>{children}</DescriptionListDescription>
  </DescriptionListGroup>
);

export const HCDSummary: React.FC<{ hcd: HCD }> = ({ hcd }) => {
  const s = hcd.status ?? {};
  return (
    <>
      <DescriptionList isHorizontal>
        <Item term="Phase">{phase(hcd)}</Item>
        <Item term="Host">{s.hostingCluster || '-'}</Item>
        <Item term="Version">{version(hcd) || '-'}</Item>
        <Item term="Imported as">{s.managedCluster || '-'}</Item>
        <Item term="Kubeconfig Secret">{s.kubeconfigSecret?.name || '-'}</Item>
        <Item term="Placement">{hcd.spec?.placement || '-'}</Item>
      </DescriptionList>
      <Title headingLevel="h2">Node pools</Title>
      <Table aria-label="Node pools" variant="compact" data-test="nodepools">
        <Thead>
          <Tr>
            <Th>Name</Th>
            <Th>Ready / replicas</Th>
          </Tr>
        </Thead>
        <Tbody>
          {(s.nodePools ?? []).map((np) => (
            <Tr key={np.name}>
              <Td dataLabel="Name">{np.name}</Td>
              <Td dataLabel="Ready / replicas">
                {np.readyReplicas ?? 0} / {np.replicas ?? 0}
              </Td>
            </Tr>
          ))}
        </Tbody>
      </Table>
      <Title headingLevel="h2">Conditions</Title>
      <Table aria-label="Conditions" variant="compact" data-test="conditions">
        <Thead>
          <Tr>
            <Th>Type</Th>
            <Th>Reason</Th>
            <Th>Message</Th>
            <Th>Since</Th>
          </Tr>
        </Thead>
        <Tbody>
          {(s.conditions ?? []).map((c) => (
            <Tr key={c.type} data-test={`condition-${c.type}`}>
              <Td dataLabel="Type">
                <ConditionLabel condition={c} />
              </Td>
              <Td dataLabel="Reason">{c.reason}</Td>
              <Td dataLabel="Message">{c.message}</Td>
              <Td dataLabel="Since">{c.lastTransitionTime}</Td>
            </Tr>
          ))}
        </Tbody>
      </Table>
    </>
  );
};

const HCDDetails: React.FC = () => {
  const { ns, name } = useParams();
  const [hcd, loaded, error] = useK8sWatchResource<HCD>({
    groupVersionKind: HCDModel,
    namespace: ns,
    name,
  });
  return (
    <PageSection>
      <Title headingLevel="h1">
        HostedClusterDeployment {ns}/{name}
      </Title>
      {error ? (
        <LoadError what={`HostedClusterDeployment ${ns}/${name}`} error={error} />
      ) : !loaded ? (
        <Spinner aria-label="Loading" />
      ) : (
        <HCDSummary hcd={hcd} />
      )}
    </PageSection>
  );
};

export default HCDDetails;
