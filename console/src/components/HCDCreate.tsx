// Create a HostedClusterDeployment in a namespace, offering only what the
// namespace's TenantPolicy allows (releases from the ClusterImageSets it
// allows, its platforms) and the namespace's Placements. The offer comes
// from the hub (a tenant can read neither its TenantPolicy nor
// ClusterImageSets; create.ts says why); the objects are created as the
// signed-in user through the console's proxy (the SDK's k8sCreate), and
// the API server's refusal is shown word for word.
import * as React from 'react';
import { Link, useParams } from 'react-router';
import { consoleFetchJSON, k8sCreate, useK8sModel } from '@openshift-console/dynamic-plugin-sdk';
import {
  ActionGroup,
  Alert,
  Button,
  Form,
  FormGroup,
  FormHelperText,
  FormSelect,
  FormSelectOption,
  HelperText,
  HelperTextItem,
  PageSection,
  Spinner,
  TextArea,
  TextInput,
  Title,
} from '@patternfly/react-core';
import { HCDModel, PlacementModel, SecretModel } from '../models';
import {
  choices,
  createOptionsURL,
  hcdOf,
  problems,
  pullSecretOf,
  type Choice,
  type CreateForm,
  type CreateOptions,
} from '../create';
import { errorText, LoadError, useT, useWatch } from './common';

interface Result {
  pending: boolean;
  error?: string;
  created?: string;
  secretError?: string;
}

const Select: React.FC<{
  id: keyof CreateForm;
  label: string;
  value: string;
  options: Choice[];
  set: (v: string) => void;
  problem?: string;
}> = ({ id, label, value, options, set, problem }) => {
  const t = useT();
  return (
    <FormGroup label={label} isRequired fieldId={`create-${id}`}>
      <FormSelect
        id={`create-${id}`}
        data-test={`create-${id}`}
        value={value}
        onChange={(_e, v) => set(v)}
        aria-label={label}
      >
        {options.length === 0 && <FormSelectOption value="" label={t('none offered')} isDisabled />}
        {options.map((o) => (
          <FormSelectOption key={o.value} value={o.value} label={o.label} />
        ))}
      </FormSelect>
      {problem && <Problem text={problem} />}
    </FormGroup>
  );
};

const Text: React.FC<{
  id: keyof CreateForm;
  label: string;
  value: string;
  set: (v: string) => void;
  problem?: string;
}> = ({ id, label, value, set, problem }) => (
  <FormGroup label={label} isRequired fieldId={`create-${id}`}>
    <TextInput id={`create-${id}`} data-test={`create-${id}`} value={value} onChange={(_e, v) => set(v)} />
    {problem && <Problem text={problem} />}
  </FormGroup>
);

const Problem: React.FC<{ text: string }> = ({ text }) => (
  <FormHelperText>
    <HelperText>
      <HelperTextItem variant="error">{text}</HelperTextItem>
    </HelperText>
  </FormHelperText>
);

// why says, per field, what the form wants there.
const why = (t: ReturnType<typeof useT>): Record<keyof CreateForm, string> => ({
  namespace: '',
  name: t('a lowercase RFC 1123 label (lowercase letters, digits and -)'),
  release: t('choose a release the policy allows'),
  platform: t('choose a platform the policy allows'),
  agentNamespace: t('choose the namespace of the Agents'),
  placement: t('choose a Placement of the namespace'),
  baseDomain: t('required'),
  replicas: t('a whole number'),
  pullSecret: t('a pull secret: JSON with an "auths" object (.dockerconfigjson)'),
});

const HCDCreate: React.FC = () => {
  const t = useT();
  const { ns = '' } = useParams();
  const [options, setOptions] = React.useState<{ answer?: CreateOptions; error?: unknown }>({});
  React.useEffect(() => {
    let closed = false;
    consoleFetchJSON(createOptionsURL(ns)).then(
      (answer: CreateOptions) => !closed && setOptions({ answer }),
      (error: unknown) => !closed && setOptions({ error }),
    );
    return () => {
      closed = true;
    };
  }, [ns]);
  const [placements, placementsLoaded, placementsError] = useWatch<{ metadata: { name?: string } }[]>({
    groupVersionKind: PlacementModel,
    isList: true,
    namespace: ns,
  });
  const [hcdModel] = useK8sModel(HCDModel);
  const [secretModel] = useK8sModel(SecretModel);
  const offered = React.useMemo(() => choices(options.answer, placements ?? []), [options.answer, placements]);

  const [form, setForm] = React.useState<CreateForm>({
    namespace: ns,
    name: '',
    release: '',
    platform: '',
    agentNamespace: '',
    placement: '',
    baseDomain: '',
    replicas: '2',
    pullSecret: '',
  });
  const set = (field: keyof CreateForm) => (value: string) => setForm((f) => ({ ...f, [field]: value }));
  // Preselect the first of each offer (the newest release), until the
  // user chooses.
  React.useEffect(() => {
    setForm((f) => ({
      ...f,
      namespace: ns,
      release: f.release || offered.releases[0]?.value || '',
      platform: f.platform || offered.platforms[0]?.value || '',
      agentNamespace: f.agentNamespace || offered.agentNamespaces.Agent?.[0]?.value || '',
      placement: f.placement || offered.placements[0]?.value || '',
    }));
  }, [ns, offered]);
  const wrong = problems(form, offered);
  const [touched, setTouched] = React.useState(false);
  // shown: what to say under a field, once the user tried to send.
  const shown = (field: keyof CreateForm): string | undefined => (touched && wrong[field] ? why(t)[field] : undefined);
  const [result, setResult] = React.useState<Result>({ pending: false });

  const submit = async (e?: React.FormEvent) => {
    e?.preventDefault();
    setTouched(true);
    if (Object.keys(wrong).length > 0 || !hcdModel || !secretModel) return;
    setResult({ pending: true });
    let created: { metadata: { name?: string; uid?: string } };
    try {
      created = await k8sCreate({ model: hcdModel, data: hcdOf(form) });
    } catch (err) {
      setResult({ pending: false, error: errorText(err) });
      return;
    }
    try {
      await k8sCreate({ model: secretModel, data: pullSecretOf(form, created) });
      setResult({ pending: false, created: form.name });
    } catch (err) {
      setResult({ pending: false, created: form.name, secretError: errorText(err) });
    }
  };

  const answer = options.answer;
  return (
    <PageSection>
      <Title headingLevel="h1">{t('Create HostedClusterDeployment in {{ns}}', { ns })}</Title>
      {options.error ? (
        <LoadError what={t('what {{ns}} may create', { ns })} error={options.error} />
      ) : !answer ? (
        <Spinner aria-label={t('Loading')} />
      ) : (
        <>
          <p data-test="create-policy">
            {t(
              "Offered by {{policy}}: releases from ClusterImageSets it allows ({{repositories}}), its platforms, and this namespace's Placements. The API server and the hub check again.",
              {
                policy: answer.policy,
                repositories:
                  (answer.releaseRepositories ?? []).join(', ') + (answer.requireDigest ? t(', by digest') : ''),
              },
            )}
          </p>
          {answer.refused && (
            <Alert
              variant="danger"
              isInline
              title={t('The tenant policy allows nothing here')}
              data-test="create-refused-policy"
            >
              {answer.refused}
            </Alert>
          )}
          {answer.releasesUnknown && (
            <Alert variant="warning" isInline title={t('No releases offered')} data-test="create-releases-unknown">
              {answer.releasesUnknown}
            </Alert>
          )}
          {placementsError && <LoadError what={t('Placements in {{ns}}', { ns })} error={placementsError} />}
          <Form onSubmit={(e) => void submit(e)} data-test="create-form">
            <Text id="name" label={t('Name')} value={form.name} set={set('name')} problem={shown('name')} />
            <Select
              id="release"
              label={t('Release')}
              value={form.release}
              options={offered.releases}
              set={set('release')}
              problem={shown('release')}
            />
            <Select
              id="platform"
              label={t('Platform')}
              value={form.platform}
              options={offered.platforms}
              set={set('platform')}
              problem={shown('platform')}
            />
            {form.platform === 'Agent' && (
              <Select
                id="agentNamespace"
                label={t("Agents' namespace")}
                value={form.agentNamespace}
                options={offered.agentNamespaces.Agent ?? []}
                set={set('agentNamespace')}
                problem={shown('agentNamespace')}
              />
            )}
            <Select
              id="placement"
              label={t('Placement')}
              value={form.placement}
              options={placementsLoaded ? offered.placements : []}
              set={set('placement')}
              problem={shown('placement')}
            />
            <Text
              id="baseDomain"
              label={t('Base domain')}
              value={form.baseDomain}
              set={set('baseDomain')}
              problem={shown('baseDomain')}
            />
            <Text
              id="replicas"
              label={t('Worker nodes')}
              value={form.replicas}
              set={set('replicas')}
              problem={shown('replicas')}
            />
            <FormGroup label={t('Pull secret')} isRequired fieldId="create-pullSecret">
              <TextArea
                id="create-pullSecret"
                data-test="create-pullSecret"
                value={form.pullSecret}
                onChange={(_e, v) => set('pullSecret')(v)}
                aria-label={t('Pull secret')}
                resizeOrientation="vertical"
              />
              {shown('pullSecret') && <Problem text={shown('pullSecret')} />}
            </FormGroup>
            {result.error && (
              <Alert
                variant="danger"
                isInline
                title={t('The API server refused the HostedClusterDeployment')}
                data-test="create-error"
              >
                {result.error}
              </Alert>
            )}
            {result.created && (
              <Alert
                variant={result.secretError ? 'warning' : 'success'}
                isInline
                title={t('Created {{name}}', { name: result.created })}
                data-test="created"
              >
                <Link to={`/hcpfleet/ns/${ns}/hostedclusterdeployments/${result.created}`}>{result.created}</Link>
                {result.secretError && (
                  <p data-test="create-secret-error">
                    {t('Its pull secret was not created: {{error}}', { error: result.secretError })}
                  </p>
                )}
              </Alert>
            )}
            <ActionGroup>
              <Button
                type="submit"
                variant="primary"
                data-test="create-submit"
                isLoading={result.pending}
                isDisabled={result.pending || !!answer.refused || !hcdModel || !secretModel}
              >
                {t('Create')}
              </Button>
            </ActionGroup>
          </Form>
        </>
      )}
    </PageSection>
  );
};

export default HCDCreate;
