// One HostedClusterDeployment: phase, host, version, links to the imported
// ManagedCluster and the admin kubeconfig Secret (its page, never its data
// here), node pools with a scale action, every condition with its reason
// and message, which is where hcp-fleet says what is wrong and what to do,
// the scheduler's explanation of where it goes, and the Events about it.
import * as React from 'react';
import { useParams } from 'react-router';
import { ResourceLink } from '@openshift-console/dynamic-plugin-sdk';
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
import { ConditionLabel, LoadError, useT, useWatch } from './common';
import { NodePools } from './NodePools';
import { HCDEvents } from './HCDEvents';
import { HCDExplanation, useExplanation } from './HCDExplanation';
import { HCDUpdates } from './HCDUpdates';

// id names the field for tests whatever the language; term is translated.
const Item: React.FC<{ id: string; term: string; children: React.ReactNode }> = ({ id, term, children }) => (
  <DescriptionListGroup>
    <DescriptionListTerm>{term}</DescriptionListTerm>
    <DescriptionListDescription data-test={`field-${id}`}>{children}</DescriptionListDescription>
  </DescriptionListGroup>
);

export const HCDSummary: React.FC<{ hcd: HCD }> = ({ hcd }) => {
  const t = useT();
  const s = hcd.status ?? {};
  const explanation = useExplanation(hcd);
  return (
    <>
      <DescriptionList isHorizontal>
        <Item id="Phase" term={t('Phase')}>
          {phase(hcd)}
        </Item>
        <Item id="Host" term={t('Host')}>
          {s.hostingCluster || '-'}
        </Item>
        <Item id="Version" term={t('Version')}>
          {version(hcd) || '-'}
        </Item>
        <Item id="Imported as" term={t('Imported as')}>
          {s.managedCluster ? <ResourceLink groupVersionKind={ManagedClusterModel} name={s.managedCluster} /> : '-'}
        </Item>
        <Item id="Kubeconfig Secret" term={t('Kubeconfig Secret')}>
          {s.kubeconfigSecret?.name ? (
            <ResourceLink
              groupVersionKind={SecretModel}
              name={s.kubeconfigSecret.name}
              namespace={hcd.metadata.namespace}
            />
          ) : (
            '-'
          )}
        </Item>
        <Item id="Placement" term={t('Placement')}>
          {hcd.spec?.placement || '-'}
        </Item>
      </DescriptionList>
      <Title headingLevel="h2">{t('Available updates')}</Title>
      <HCDUpdates hcd={hcd} updates={explanation.answer?.explanation.Updates} />
      <Title headingLevel="h2">{t('Node pools')}</Title>
      <NodePools hcd={hcd} />
      <Title headingLevel="h2">{t('Conditions')}</Title>
      <Table aria-label={t('Conditions')} variant="compact" data-test="conditions">
        <Thead>
          <Tr>
            <Th>{t('Type')}</Th>
            <Th>{t('Reason')}</Th>
            <Th>{t('Message')}</Th>
            <Th>{t('Since')}</Th>
          </Tr>
        </Thead>
        <Tbody>
          {(s.conditions ?? []).map((c) => (
            <Tr key={c.type} data-test={`condition-${c.type}`}>
              <Td dataLabel={t('Type')}>
                <ConditionLabel condition={c} />
              </Td>
              <Td dataLabel={t('Reason')}>{c.reason}</Td>
              <Td dataLabel={t('Message')}>{c.message}</Td>
              <Td dataLabel={t('Since')}>{c.lastTransitionTime}</Td>
            </Tr>
          ))}
        </Tbody>
      </Table>
      <Title headingLevel="h2">{t('Scheduling: why here, why not there')}</Title>
      <HCDExplanation state={explanation} />
      <Title headingLevel="h2">{t('Events')}</Title>
      <HCDEvents hcd={hcd} />
    </>
  );
};

const HCDDetails: React.FC = () => {
  const t = useT();
  const { ns, name } = useParams();
  const [hcd, loaded, error] = useWatch<HCD>({
    groupVersionKind: HCDModel,
    namespace: ns,
    name,
  });
  return (
    <PageSection>
      <Title headingLevel="h1">{t('HostedClusterDeployment {{ns}}/{{name}}', { ns, name })}</Title>
      {error ? (
        <LoadError what={t('HostedClusterDeployment {{ns}}/{{name}}', { ns, name })} error={error} />
      ) : !loaded ? (
        <Spinner aria-label={t('Loading')} />
      ) : (
        <HCDSummary hcd={hcd} />
      )}
    </PageSection>
  );
};

export default HCDDetails;
