// The fleet overview: the management clusters as `kubectl hcpfleet status`
// shows them (availability, cordon, add-on and HyperShift operator state,
// hosted count, capacity, claims) and the hosted clusters on each. A tenant
// may not list ManagedClusters: the API server refuses, and the page says so.
import * as React from 'react';
import { Link } from 'react-router';
import { Label, PageSection, Spinner, Title } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { AddOnPlacementScoreModel, HCDModel, ManagedClusterAddOnModel, ManagedClusterModel } from '../models';
import { hosts, type AddOnPlacementScore, type HCD, type ManagedCluster, type ManagedClusterAddOn } from '../fleet';
import { LoadError, useT, useWatch } from './common';

const FleetOverview: React.FC = () => {
  const t = useT();
  const [clusters, clustersLoaded, clustersError] = useWatch<ManagedCluster[]>({
    groupVersionKind: ManagedClusterModel,
    isList: true,
  });
  const [addOns] = useWatch<ManagedClusterAddOn[]>({
    groupVersionKind: ManagedClusterAddOnModel,
    isList: true,
  });
  const [scores] = useWatch<AddOnPlacementScore[]>({
    groupVersionKind: AddOnPlacementScoreModel,
    isList: true,
  });
  const [hcds, , hcdsError] = useWatch<HCD[]>({ groupVersionKind: HCDModel, isList: true });
  const rows = React.useMemo(
    () => hosts(clusters ?? [], addOns ?? [], scores ?? [], hcdsError ? [] : (hcds ?? [])),
    [clusters, addOns, scores, hcds, hcdsError],
  );
  return (
    <PageSection>
      <Title headingLevel="h1">{t('Hosted control plane fleet')}</Title>
      {clustersError ? (
        <LoadError what={t('the management clusters')} error={clustersError} />
      ) : !clustersLoaded ? (
        <Spinner aria-label={t('Loading management clusters')} />
      ) : (
        <Table aria-label={t('Management clusters')} variant="compact" data-test="hosts">
          <Thead>
            <Tr>
              <Th>{t('Name')}</Th>
              <Th>{t('Available')}</Th>
              <Th>{t('Add-on')}</Th>
              <Th>{t('HyperShift operator')}</Th>
              <Th>{t('Hosted / capacity')}</Th>
              <Th>{t('Free score')}</Th>
              <Th>{t('Platforms')}</Th>
              <Th>{t('Versions')}</Th>
              <Th>{t('Hosted clusters')}</Th>
            </Tr>
          </Thead>
          <Tbody>
            {rows.map((h) => (
              <Tr key={h.name} data-test={`host-${h.name}`}>
                <Td dataLabel={t('Name')}>{h.name}</Td>
                <Td dataLabel={t('Available')}>
                  {h.available}
                  {h.cordoned && (
                    <Label color="orange" isCompact data-test="cordoned">
                      {t('Cordoned')}
                    </Label>
                  )}
                </Td>
                <Td dataLabel={t('Add-on')}>{h.addOn}</Td>
                <Td dataLabel={t('HyperShift operator')}>{h.operator}</Td>
                <Td dataLabel={t('Hosted / capacity')} title={h.capacityBasis}>
                  {h.hosted} / {h.capacity}
                </Td>
                <Td dataLabel={t('Free score')}>{h.freeScore}</Td>
                <Td dataLabel={t('Platforms')}>{h.platforms}</Td>
                <Td dataLabel={t('Versions')}>{h.versions}</Td>
                <Td dataLabel={t('Hosted clusters')}>
                  {h.deployments.map((d) => {
                    const [ns, name] = d.split('/');
                    return (
                      <div key={d}>
                        <Link to={`/hcpfleet/ns/${ns}/hostedclusterdeployments/${name}`}>{d}</Link>
                      </div>
                    );
                  })}
                </Td>
              </Tr>
            ))}
          </Tbody>
        </Table>
      )}
      {hcdsError && <LoadError what={t('HostedClusterDeployments in all namespaces')} error={hcdsError} />}
    </PageSection>
  );
};

export default FleetOverview;
