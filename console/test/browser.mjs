// Drives headless Chromium (Debian's chromium, through puppeteer-core) over
// the test host's pages for one identity: for each page it waits until
// every selector in waitFor is present (the page's positive signal: the
// data or the API server's refusal has arrived), takes a screenshot and
// reports the page's text. Called by test/console (Go), which serves the
// host and asserts on the report:
//
//   node test/browser.mjs <baseURL> <identity> <screenshot dir> < pages.json
//
// pages.json: [{"name": "fleet", "path": "/hcpfleet/fleet", "waitFor": ["[data-test=hosts]"],
//               "actions": [{"fill": [selector, text]}, {"select": [selector, value]}, {"click": selector},
//                           {"waitFor": [selectors]}]}]
// Actions run in order after the page's waitFor: fill replaces an input's
// text as a user types it, select chooses an option of a <select>, click
// clicks, waitFor waits for the answer.
// stdout: [{"name", "text", "screenshot", "error"}]
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const [baseURL, identity, outDir] = process.argv.slice(2);
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const pages = JSON.parse(Buffer.concat(chunks).toString());
const timeout = Number(process.env.CONSOLE_TEST_PAGE_TIMEOUT_MS ?? 120000);

await mkdir(outDir, { recursive: true });
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  // Root in a container: Chromium's sandbox needs user namespaces.
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const report = [];
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 900 });
  const logs = [];
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
  for (const p of pages) {
    const r = { name: p.name, path: p.path };
    try {
      await page.goto(new URL(p.path, baseURL).href, { waitUntil: 'load', timeout });
      await page.waitForFunction(
        (sels) =>
          document.body.dataset.pluginError ||
          document.querySelector('[data-test=plugin-error]') ||
          sels.every((s) => document.querySelector(s)),
        { timeout, polling: 200 },
        p.waitFor,
      );
      const failed = await page.evaluate(
        () => document.body.dataset.pluginError || document.querySelector('[data-test=plugin-error]')?.textContent,
      );
      if (failed) r.error = `plugin did not load: ${failed}`;
      for (const a of failed ? [] : (p.actions ?? [])) {
        if (a.fill) {
          const [sel, text] = a.fill;
          await page.click(sel, { clickCount: 3 });
          await page.keyboard.press('Backspace');
          await page.type(sel, text);
        }
        if (a.select) {
          const [sel, value] = a.select;
          const chosen = await page.select(sel, value);
          if (!chosen.includes(value)) throw new Error(`${sel} offers no option ${value}`);
        }
        if (a.click) await page.click(a.click);
        if (a.waitFor) {
          await page.waitForFunction(
            (sels) => sels.every((s) => document.querySelector(s)),
            { timeout, polling: 200 },
            a.waitFor,
          );
        }
      }
    } catch (e) {
      r.error = `${e.message}; browser log: ${logs.slice(-10).join(' | ')}`;
    }
    r.text = await page.evaluate(() => document.getElementById('app')?.innerText ?? '').catch(() => '');
    r.screenshot = path.join(outDir, `${identity}-${p.name}.png`);
    await page.screenshot({ path: r.screenshot, fullPage: true }).catch((e) => {
      r.error = (r.error ? `${r.error}; ` : '') + `screenshot: ${e.message}`;
    });
    report.push(r);
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(report));
