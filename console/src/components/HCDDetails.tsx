// One HostedClusterDeployment: phase, host, version, links to the imported
// ManagedCluster and the admin kubeconfig Secret (its page, never its data
// here), node pools with a scale action, every condition with its reason
// and message, which is where hcp-fleet says what is wrong and what to do,
// the scheduler's explanation of where it goes, and the Events about it.
import * as React from 'react';
import { useParams } from 'react-router';
import { ResourceLink, useK8sWatchResource } from '@openshift-console/dynamic-plugin-sdk';
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
import { HCDModel, ManagedClusterModel, SecretModel } from '../models';
import { phase, version, type HCD } from '../fleet';
import { ConditionLabel, LoadError } from './common';
import { NodePools } from './NodePools';
import { HCDEvents } from './HCDEvents';
import { HCDExplanation, useExplanation } from './HCDExplanation';
import { HCDUpdates } from './HCDUpdates';

const Item: React.FC<{ term: string; children: React.ReactNode }> = ({ term, children }) => (
  <DescriptionListGroup>
    <DescriptionListTerm>{term}</DescriptionListTerm>
    <DescriptionListDescription data-test={`field-${term}`}>{children}</DescriptionListDescription>
  </DescriptionListGroup>
);

export const HCDSummary: React.FC<{ hcd: HCD }> = ({ hcd }) => {
  const s = hcd.status ?? {};
  const explanation = useExplanation(hcd);
  return (
    <>
      <DescriptionList isHorizontal>
        <Item term="Phase">{phase(hcd)}</Item>
        <Item term="Host">{s.hostingCluster || '-'}</Item>
        <Item term="Version">{version(hcd) || '-'}</Item>
        <Item term="Imported as">
          {s.managedCluster ? <ResourceLink groupVersionKind={ManagedClusterModel} name={s.managedCluster} /> : '-'}
        </Item>
        <Item term="Kubeconfig Secret">
          {s.kubeconfigSecret?.name ? (
            <ResourceLink groupVersionKind={SecretModel} name={s.kubeconfigSecret.name} namespace={hcd.metadata.namespace} />
          ) : (
            '-'
          )}
        </Item>
        <Item term="Placement">{hcd.spec?.placement || '-'}</Item>
      </DescriptionList>
      <Title headingLevel="h2">Available updates</Title>
      <HCDUpdates hcd={hcd} updates={explanation.answer?.explanation.Updates} />
      <Title headingLevel="h2">Node pools</Title>
      <NodePools hcd={hcd} />
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
      <Title headingLevel="h2">Scheduling: why here, why not there</Title>
      <HCDExplanation state={explanation} />
      <Title headingLevel="h2">Events</Title>
      <HCDEvents hcd={hcd} />
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
