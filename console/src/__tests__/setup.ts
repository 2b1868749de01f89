// react-router 7 needs TextEncoder, which jsdom does not provide.
import { TextDecoder, TextEncoder } from 'util';
import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';

Object.assign(globalThis, { TextEncoder, TextDecoder });

// The console's own tests find elements by data-test; so do these.
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('@testing-library/dom').configure({ testIdAttribute: 'data-test' });

// The plugin's English locale, loaded as the console loads it into its
// i18next (the console's options: '~' between namespace and key, keys
// with dots kept whole; React escapes, so i18next does not).
void i18next.use(initReactI18next).init({
  lng: 'en',
  fallbackLng: 'en',
  ns: ['plugin__hcp-fleet'],
  nsSeparator: '~',
  keySeparator: false,
  interpolation: { escapeValue: false },
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  resources: { en: { 'plugin__hcp-fleet': require('../../locales/en/plugin__hcp-fleet.json') } },
  initAsync: false,
});
