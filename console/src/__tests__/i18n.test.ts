// Every user-facing string the plugin translates is a key of its English
// locale (the console loads locales/en/plugin__hcp-fleet.json for the
// namespace plugin__hcp-fleet), every key is used, and every key is
// translated to itself: the console shows the key when a locale lacks it,
// so a missing key would show, and a stale one would hide a renamed text.
import * as fs from 'fs';
import * as path from 'path';

const root = path.resolve(__dirname, '..', '..');
const locale = JSON.parse(
  fs.readFileSync(path.join(root, 'locales', 'en', 'plugin__hcp-fleet.json'), 'utf8'),
) as Record<string, string>;

const sources = (dir: string): string[] => {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== '__tests__') out.push(...sources(p));
    } else if (/\.tsx?$/.test(e.name)) {
      out.push(p);
    }
  }
  return out;
};

const unquote = (s: string) => s.replace(/\\(['"\\])/g, '$1');

// each calls f with every match of the global regexp re in text.
const each = (re: RegExp, text: string, f: (m: RegExpExecArray) => void) => {
  for (let m = re.exec(text); m !== null; m = re.exec(text)) f(m);
};

// The first argument of every t( call, which must be a string literal
// (a key computed at run time cannot be checked, nor extracted).
const used = new Map<string, string>();
const computed: string[] = [];
for (const file of sources(path.join(root, 'src'))) {
  const text = fs.readFileSync(file, 'utf8');
  const rel = path.relative(root, file);
  each(/\bt\(\s*(['"])((?:\\.|(?!\1).)*)\1/g, text, (m) => used.set(unquote(m[2]), rel));
  each(/\bt\(\s*[^'"\s)]/g, text, (m) => computed.push(`${rel}: ${text.slice(m.index, m.index + 40)}`));
}
// The navigation's names: %<namespace>~<key>%, which the console translates.
const extensions = fs.readFileSync(path.join(root, 'console-extensions.json'), 'utf8');
each(/%plugin__hcp-fleet~([^%]+)%/g, extensions, (m) => used.set(m[1], 'console-extensions.json'));

describe('the English locale', () => {
  it('has every key the plugin uses', () => {
    expect(used.size).toBeGreaterThan(100);
    const missing: string[] = [];
    used.forEach((file, key) => {
      if (!(key in locale)) missing.push(`${file}: ${key}`);
    });
    expect(missing).toEqual([]);
  });
  it('has no key the plugin does not use', () => {
    expect(Object.keys(locale).filter((k) => !used.has(k))).toEqual([]);
  });
  it('translates each key to itself', () => {
    expect(Object.keys(locale).filter((k) => locale[k] !== k)).toEqual([]);
  });
  it('is asked only for literal keys', () => {
    expect(computed).toEqual([]);
  });
  it('names only the plugin namespace in the extensions', () => {
    expect(extensions.match(/%[^%~"]+~/g)?.every((m) => m === '%plugin__hcp-fleet~')).toBe(true);
  });
});
