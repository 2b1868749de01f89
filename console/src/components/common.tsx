// Small pieces the pages share: how a load error and a condition's state
// are shown.
import * as React from 'react';
import { useTranslation } from 'react-i18next';
import { useK8sWatchResource, type WatchK8sResource } from '@openshift-console/dynamic-plugin-sdk';
import { Alert, Label } from '@patternfly/react-core';
import { good, type Condition } from '../fleet';

// errorText is what the API server answered (a tenant's 403 included):
// the page says why it shows nothing rather than showing an empty list.
export const errorText = (err: unknown): string => {
  if (!err) return '';
  const e = err as { message?: string; json?: { message?: string }; code?: number };
  return e.json?.message ?? e.message ?? (typeof err === 'string' ? err : JSON.stringify(err));
};

// useWatch is the SDK's useK8sWatchResource with its load error typed
// unknown (the SDK's is any): the pages only show it (errorText).
export const useWatch = <R,>(resource: WatchK8sResource): [R, boolean, unknown] => useK8sWatchResource<R>(resource);

// The console's i18n namespace of this plugin: plugin__<consolePlugin.name>.
export const i18nNamespace = 'plugin__hcp-fleet';

// useT is the plugin's translation function (react-i18next, which the
// console shares with its plugins and loads this plugin's locales into).
export const useT = () => useTranslation(i18nNamespace).t;

// what is already translated by the caller.
export const LoadError: React.FC<{ what: string; error: unknown }> = ({ what, error }) => {
  const t = useT();
  return (
    <Alert variant="warning" isInline title={t('Cannot read {{what}}', { what })} data-test="load-error">
      {errorText(error)}
    </Alert>
  );
};

export const ConditionLabel: React.FC<{ condition: Condition }> = ({ condition }) => (
  <Label color={good(condition) ? 'green' : condition.status === 'Unknown' ? 'grey' : 'red'} isCompact>
    {condition.type}={condition.status}
  </Label>
);
