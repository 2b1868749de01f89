// A minimal console: it loads the plugin the way the OpenShift console does
// (frontend/packages/console-dynamic-plugin-sdk/src/runtime/plugin-init.ts
// and plugin-shared-modules.ts): webpack's share scope is initialized with
// the modules the console shares with plugins (ModuleFederationPlugin in
// webpack.config.js), a PluginStore from @openshift/dynamic-plugin-sdk loads
// /api/plugins/<name>/plugin-manifest.json, runs the remote entry with that
// share scope, and the console.page/route and console.navigation/href
// extensions become routes and links (named through the plugin's locale,
// loaded into i18next as the console loads it). The k8s hooks talk to /api/kubernetes,
// which the test server proxies to the hub as one user.
import * as React from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Link, Route, Routes } from 'react-router';
import { PluginStore } from '@openshift/dynamic-plugin-sdk';
import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';

declare const __webpack_init_sharing__: (scope: string) => Promise<void>;
declare const __webpack_share_scopes__: Record<string, Record<string, unknown>>;

interface Page {
  paths: string[];
  Component: React.ComponentType;
}
interface NavLink {
  id: string;
  name: string;
  href: string;
}

const pluginName = new URLSearchParams(location.search).get('plugin') ?? 'hcp-fleet';

const main = async () => {
  const root = createRoot(document.getElementById('app'));
  await __webpack_init_sharing__('default');
  const store = new PluginStore({
    loaderOptions: {
      sharedScope: __webpack_share_scopes__.default,
      // The console resolves @console/pluginAPI to its own version.
      customDependencyResolutions: { '@console/pluginAPI': '4.22.0' },
    },
  });
  await store.loadPlugin(`/api/plugins/${pluginName}/plugin-manifest.json`);
  // The console loads a plugin's locale for its namespace plugin__<name>
  // (its backend fetches locales/<lng>/plugin__<name>.json from the
  // plugin's Service) into the i18next react-i18next shares, with its
  // options: '~' between namespace and key, keys with dots whole.
  const ns = `plugin__${pluginName}`;
  const locale = await fetch(`/api/plugins/${pluginName}/locales/en/${ns}.json`);
  if (!locale.ok) throw new Error(`locale ${ns}: ${locale.status} ${locale.statusText}`);
  await i18next.use(initReactI18next).init({
    lng: 'en',
    fallbackLng: 'en',
    ns: [ns],
    nsSeparator: '~',
    keySeparator: false,
    interpolation: { escapeValue: false },
    resources: { en: { [ns]: (await locale.json()) as Record<string, string> } },
  });
  const info = store.getPluginInfo().find((p) => p.manifest.name === pluginName);
  if (info?.status !== 'loaded') {
    const why = info?.status === 'failed' ? info.errorMessage : 'not loaded';
    root.render(
      <p data-test="plugin-error">
        plugin {pluginName}: {why}
      </p>,
    );
    return;
  }
  const pages: Page[] = [];
  const nav: NavLink[] = [];
  for (const e of store.getExtensions()) {
    const p = e.properties as Record<string, unknown>;
    if (e.type === 'console.page/route') {
      const Component = await (p.component as () => Promise<React.ComponentType>)();
      pages.push({ paths: ([] as string[]).concat(p.path as string | string[]), Component });
    } else if (e.type === 'console.navigation/href') {
      // A name "%<namespace>~<key>%" is translated, as the console does.
      const name = (p.name as string).replace(/^%(.+)%$/, (_, key: string) => i18next.t(key));
      nav.push({ id: p.id as string, name, href: p.href as string });
    }
  }
  root.render(
    <BrowserRouter>
      <nav data-test="nav">
        {nav.map((n) => (
          <Link key={n.id} to={n.href} style={{ marginRight: '1em' }}>
            {n.name}
          </Link>
        ))}
      </nav>
      <Routes>
        {pages.flatMap(({ paths, Component }) =>
          paths.map((path) => <Route key={path} path={path} element={<Component />} />),
        )}
      </Routes>
    </BrowserRouter>,
  );
  document.body.dataset.pluginLoaded = 'true';
};

main().catch((err) => {
  document.body.dataset.pluginError = String(err);

  console.error(err);
});
