// The host's '@openshift-console/dynamic-plugin-sdk' shared module: what the
// console provides to plugins under that name (its lib-core), reduced to the
// hooks this plugin calls. The published npm package is only the plugin's
// build-time face: its lib requires console internals (@console/shared), so
// a host that is not the console must provide the implementation itself.
//
// useK8sWatchResource follows the console's
// frontend/packages/console-dynamic-plugin-sdk/src/utils/k8s/hooks/useK8sWatchResource.ts
// and app/k8s/actions/k8s.ts (watchK8sList, watchK8sObject): find the
// resource from the group/version/kind (the console's models come from API
// discovery), list or get it through the console's proxy at
// /api/kubernetes (the user's own identity), then watch it over a websocket
// from the returned resourceVersion; the answer is [data, loaded,
// loadError], and loadError carries the API server's Status like the
// console's HttpError (message, code, json). useK8sModel, k8sPatch,
// k8sCreate and ResourceLink follow the console's
// frontend/packages/console-dynamic-plugin-sdk/src/utils/k8s/k8s-resource.ts
// (a JSON patch, application/json-patch+json, or a POST, through the same
// proxy) and
// public/components/utils/resource-link.tsx (resourcePathFromModel: /k8s/
// cluster/ or ns/<ns>/, then group~version~kind for a CRD's kind, the
// plural for a built-in one). consoleFetchJSON follows the console's
// public/co-fetch.ts: a same-origin GET whose non-2xx answer is an
// HttpError carrying the JSON body (a Status); the console's backend adds
// the user's token for a ConsolePlugin proxy with authorization UserToken,
// which the test's proxy does here.
import * as React from 'react';

export interface K8sGroupVersionKind {
  group?: string;
  version: string;
  kind: string;
}
export interface WatchK8sResource {
  groupVersionKind: K8sGroupVersionKind;
  name?: string;
  namespace?: string;
  isList?: boolean;
  fieldSelector?: string;
}

interface K8sObject {
  metadata: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
}

export class HttpError extends Error {
  constructor(
    message: string,
    public code: number,
    public json?: { message?: string; reason?: string },
  ) {
    super(message);
  }
}

const base = '/api/kubernetes';

interface Status {
  message?: string;
  reason?: string;
}

// answer is a response's JSON, or the API server's Status thrown as an
// HttpError, as the console's co-fetch does.
const answer = async <T>(res: Response): Promise<T> => {
  const body = (await res.json().catch(() => undefined)) as unknown;
  if (!res.ok) {
    const status = body as Status | undefined;
    throw new HttpError(status?.message ?? res.statusText, res.status, status);
  }
  return body as T;
};

const fetchJSON = async <T>(url: string): Promise<T> =>
  answer<T>(await fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' }));

// Discovery: the plural resource name and scope of a kind (the console's
// models, built the same way from /apis).
const models = new Map<string, Promise<{ plural: string; namespaced: boolean }>>();
const modelFor = (gvk: K8sGroupVersionKind) => {
  const gv = gvk.group ? `apis/${gvk.group}/${gvk.version}` : `api/${gvk.version}`;
  const key = `${gv}/${gvk.kind}`;
  if (!models.has(key)) {
    models.set(
      key,
      fetchJSON<{ resources: { name: string; kind: string; namespaced: boolean }[] }>(`${base}/${gv}`).then((list) => {
        const r = list.resources.find((x) => x.kind === gvk.kind && !x.name.includes('/'));
        if (!r) throw new HttpError(`no model for ${key}`, 404);
        return { plural: r.name, namespaced: r.namespaced };
      }),
    );
  }
  return models.get(key).then((m) => ({ gv, ...m }));
};

const urlFor = (gv: string, plural: string, namespaced: boolean, namespace?: string, name?: string) =>
  `${base}/${gv}${namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/${plural}${
    name ? `/${encodeURIComponent(name)}` : ''
  }`;

const keyOf = (o: K8sObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export const useK8sWatchResource = <R>(resource: WatchK8sResource | null): [R, boolean, unknown] => {
  const [state, setState] = React.useState<{ data: unknown; loaded: boolean; error: unknown }>({
    data: resource?.isList ? [] : {},
    loaded: false,
    error: undefined,
  });
  const key = JSON.stringify(resource ?? null);
  React.useEffect(() => {
    if (!resource) return undefined;
    const { groupVersionKind, namespace, name, isList, fieldSelector } = JSON.parse(key) as WatchK8sResource;
    let closed = false;
    let ws: WebSocket | undefined;
    const items = new Map<string, K8sObject>();
    const publish = () => {
      if (closed) return;
      const list = [...items.values()];
      setState({ data: isList ? list : (list[0] ?? {}), loaded: true, error: undefined });
    };
    void (async () => {
      try {
        const m = await modelFor(groupVersionKind);
        const collection = urlFor(m.gv, m.plural, m.namespaced, namespace);
        let rv: string;
        if (isList) {
          const list = await fetchJSON<{ items: K8sObject[]; metadata: { resourceVersion: string } }>(
            fieldSelector ? `${collection}?${new URLSearchParams({ fieldSelector })}` : collection,
          );
          list.items.forEach((o: K8sObject) => items.set(keyOf(o), o));
          rv = list.metadata.resourceVersion;
        } else {
          const o = await fetchJSON<K8sObject>(urlFor(m.gv, m.plural, m.namespaced, namespace, name));
          items.set(keyOf(o), o);
          rv = o.metadata.resourceVersion ?? '';
        }
        publish();
        if (closed) return;
        const q = new URLSearchParams({ watch: 'true', resourceVersion: rv });
        if (!isList) q.set('fieldSelector', `metadata.name=${name}`);
        else if (fieldSelector) q.set('fieldSelector', fieldSelector);
        ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${collection}?${q}`);
        ws.onmessage = (msg) => {
          const ev = JSON.parse(msg.data as string) as { type: string; object: K8sObject };
          if (ev.type === 'DELETED') items.delete(keyOf(ev.object));
          else if (ev.type === 'ADDED' || ev.type === 'MODIFIED') items.set(keyOf(ev.object), ev.object);
          else return;
          publish();
        };
      } catch (error) {
        if (!closed) setState({ data: isList ? [] : {}, loaded: false, error });
      }
    })();
    return () => {
      closed = true;
      ws?.close();
    };
    // key is the resource, compared by value as the console's hook does.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  return [state.data as R, state.loaded, state.error];
};

export interface K8sModel {
  apiGroup?: string;
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  crd: boolean;
  abbr: string;
  label: string;
  labelPlural: string;
}

const modelOf = async (gvk: K8sGroupVersionKind): Promise<K8sModel> => {
  const m = await modelFor(gvk);
  return {
    apiGroup: gvk.group,
    apiVersion: gvk.version,
    kind: gvk.kind,
    plural: m.plural,
    namespaced: m.namespaced,
    // The console's models of API groups other than the built-in ones
    // are CRDs'; the kinds this plugin links to are core or OCM's.
    crd: !!gvk.group,
    abbr: gvk.kind.replace(/[a-z]/g, ''),
    label: gvk.kind,
    labelPlural: m.plural,
  };
};

// useK8sModel answers [model, inFlight], the model from discovery.
export const useK8sModel = (gvk: K8sGroupVersionKind): [K8sModel | undefined, boolean] => {
  const [model, setModel] = React.useState<K8sModel>();
  const key = JSON.stringify(gvk);
  React.useEffect(() => {
    let closed = false;
    modelOf(JSON.parse(key) as K8sGroupVersionKind).then(
      (m) => !closed && setModel(m),
      () => undefined,
    );
    return () => {
      closed = true;
    };
  }, [key]);
  return [model, !model];
};

export const k8sPatch = async <R>({
  model,
  resource,
  data,
}: {
  model: K8sModel;
  resource: K8sObject;
  data: unknown[];
}): Promise<R> => {
  const gv = model.apiGroup ? `apis/${model.apiGroup}/${model.apiVersion}` : `api/${model.apiVersion}`;
  const res = await fetch(
    urlFor(gv, model.plural, model.namespaced, resource.metadata.namespace, resource.metadata.name),
    {
      method: 'PATCH',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json-patch+json' },
      credentials: 'same-origin',
      body: JSON.stringify(data),
    },
  );
  return answer<R>(res);
};

// k8sCreate follows the console's k8s-resource.ts too: a POST of the
// object to its collection through the same proxy.
export const k8sCreate = async <R>({ model, data }: { model: K8sModel; data: K8sObject }): Promise<R> => {
  const gv = model.apiGroup ? `apis/${model.apiGroup}/${model.apiVersion}` : `api/${model.apiVersion}`;
  const res = await fetch(urlFor(gv, model.plural, model.namespaced, data.metadata.namespace), {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    credentials: 'same-origin',
    body: JSON.stringify(data),
  });
  return answer<R>(res);
};

export const ResourceLink: React.FC<{
  groupVersionKind: K8sGroupVersionKind;
  name: string;
  namespace?: string;
}> = ({ groupVersionKind: gvk, name, namespace }) => {
  const ref = gvk.group ? `${gvk.group}~${gvk.version}~${gvk.kind}` : `${gvk.kind.toLowerCase()}s`;
  const href = `/k8s/${namespace ? `ns/${namespace}` : 'cluster'}/${ref}/${encodeURIComponent(name)}`;
  return React.createElement('a', { href, 'data-test-id': name }, name);
};

export const consoleFetchJSON = (url: string): Promise<unknown> => fetchJSON<unknown>(url);
