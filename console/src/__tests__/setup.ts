// react-router 7 needs TextEncoder, which jsdom does not provide.
import { TextDecoder, TextEncoder } from 'util';

Object.assign(globalThis, { TextEncoder, TextDecoder });

// The console's own tests find elements by data-test; so do these.
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('@testing-library/dom').configure({ testIdAttribute: 'data-test' });
