// Create a HostedClusterDeployment in a namespace, offering only what the
// namespace's TenantPolicy allows (releases from the ClusterImageSets it
// allows, its platforms) and the namespace's Placements. The offer comes
// from the hub (a tenant can read neither its TenantPolicy nor
// ClusterImageSets; create.ts says why); the objects are created as the
// signed-in user through the console's proxy (the SDK's k8sCreate), and
// the API server's refusal is shown word for word.
import * as React from 'react';
import { Link, useParams } from 'react-router';
import { consoleFetchJSON, k8sCreate, useK8sModel, useK8sWatchResource } from '@openshift-console/dynamic-plugin-sdk';
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
import { choices, createOptionsURL, hcdOf, problems, pullSecretOf, type Choice, type CreateForm, type CreateOptions } from '../create';
import { errorText, LoadError } from './common';

type Result = { pending: boolean; error?: string; created?: string; secretError?: string };

const Select: React.FC<{ id: keyof CreateForm; label: string; value: string; options: Choice[]; set: (v: string) => void; problem?: string }> = ({
  id,
  label,
  value,
  options,
  set,
  problem,
}) => (
  <FormGroup label={label} isRequired fieldId={`create-${id}`}>
    <FormSelect id={`create-${id}`} data-test={`create-${id}`} value={value} onChange={(_e, v) => set(v)} aria-label={label}>
      {options.length === 0 && <FormSelectOption value="" label="none offered" isDisabled />}
      {options.map((o) => (
        <FormSelectOption key={o.value} value={o.value} label={o.label} />
      ))}
    </FormSelect>
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

const HCDCreate: React.FC = () => {
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
  const [placements, placementsLoaded, placementsError] = useK8sWatchResource<{ metadata: { name?: string } }[]>({
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
      <Title headingLevel="h1">Create HostedClusterDeployment in {ns}</Title>
      {options.error ? (
        <LoadError what={`what ${ns} may create`} error={options.error} />
      ) : !answer ? (
        <Spinner aria-label="Loading" />
      ) : (
        <>
          <p data-test="create-policy">
            Offered by {answer.policy}: releases from ClusterImageSets it allows
            {answer.releaseRepositories?.length ? ` (${answer.releaseRepositories.join(', ')}${answer.requireDigest ? ', by digest' : ''})` : ''},
            its platforms, and this namespace&apos;s Placements. The API server and the hub check again.
          </p>
          {answer.refused && (
            <Alert variant="danger" isInline title="The tenant policy allows nothing here" data-test="create-refused-policy">
              {answer.refused}
            </Alert>
          )}
          {answer.releasesUnknown && (
            <Alert variant="warning" isInline title="No releases offered" data-test="create-releases-unknown">
              {answer.releasesUnknown}
            </Alert>
          )}
          {placementsError && <LoadError what={`Placements in ${ns}`} error={placementsError} />}
          <Form onSubmit={submit} data-test="create-form">
            <FormGroup label="Name" isRequired fieldId="create-name">
              <TextInput id="create-name" data-test="create-name" value={form.name} onChange={(_e, v) => set('name')(v)} />
              {touched && wrong.name && <Problem text={wrong.name} />}
            </FormGroup>
            <Select id="release" label="Release" value={form.release} options={offered.releases} set={set('release')} problem={touched ? wrong.release : undefined} />
            <Select id="platform" label="Platform" value={form.platform} options={offered.platforms} set={set('platform')} problem={touched ? wrong.platform : undefined} />
            {form.platform === 'Agent' && (
              <Select
                id="agentNamespace"
                label="Agents' namespace"
                value={form.agentNamespace}
                options={offered.agentNamespaces.Agent ?? []}
                set={set('agentNamespace')}
                problem={touched ? wrong.agentNamespace : undefined}
              />
            )}
            <Select
              id="placement"
              label="Placement"
              value={form.placement}
              options={placementsLoaded ? offered.placements : []}
              set={set('placement')}
              problem={touched ? wrong.placement : undefined}
            />
            <FormGroup label="Base domain" isRequired fieldId="create-baseDomain">
              <TextInput id="create-baseDomain" data-test="create-baseDomain" value={form.baseDomain} onChange={(_e, v) => set('baseDomain')(v)} />
              {touched && wrong.baseDomain && <Problem text={wrong.baseDomain} />}
            </FormGroup>
            <FormGroup label="Worker nodes" isRequired fieldId="create-replicas">
              <TextInput id="create-replicas" data-test="create-replicas" value={form.replicas} onChange={(_e, v) => set('replicas')(v)} />
              {touched && wrong.replicas && <Problem text={wrong.replicas} />}
            </FormGroup>
            <FormGroup label="Pull secret" isRequired fieldId="create-pullSecret">
              <TextArea
                id="create-pullSecret"
                data-test="create-pullSecret"
                value={form.pullSecret}
                onChange={(_e, v) => set('pullSecret')(v)}
                aria-label="Pull secret"
                resizeOrientation="vertical"
              />
              {touched && wrong.pullSecret && <Problem text={wrong.pullSecret} />}
            </FormGroup>
            {result.error && (
              <Alert variant="danger" isInline title="The API server refused the HostedClusterDeployment" data-test="create-error">
                {result.error}
              </Alert>
            )}
            {result.created && (
              <Alert
                variant={result.secretError ? 'warning' : 'success'}
                isInline
                title={`Created ${result.created}`}
                data-test="created"
              >
                <Link to={`/hcpfleet/ns/${ns}/hostedclusterdeployments/${result.created}`}>{result.created}</Link>
                {result.secretError && <p data-test="create-secret-error">Its pull secret was not created: {result.secretError}</p>}
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
                Create
              </Button>
            </ActionGroup>
          </Form>
        </>
      )}
    </PageSection>
  );
};

export default HCDCreate;
