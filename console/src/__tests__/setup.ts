// react-router 7 needs TextEncoder, which jsdom does not provide.
import { TextDecoder, TextEncoder } from 'util';
import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
// From the DOM library, not the React one: importing @testing-library/react
// here, before jest's globals exist, would skip its cleanup after each test.
// eslint-disable-next-line testing-library/no-dom-import
import { configure } from '@testing-library/dom';
import en from '../../locales/en/plugin__hcp-fleet.json';

Object.assign(globalThis, { TextEncoder, TextDecoder });

// The console's own tests find elements by data-test; so do these.
configure({ testIdAttribute: 'data-test' });

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
  resources: { en: { 'plugin__hcp-fleet': en } },
  initAsync: false,
});
