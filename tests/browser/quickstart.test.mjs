// The README's browser quick start, copied into an empty project that installed the packed
// tarball (offline): main.js is the README's block as written, index.html loads it as the README
// says, the files its code reads are in public/ under the names it gives, taken from the
// repository folder the README names. Vite builds it (production build, through its
// JS API), the output folder is served from 127.0.0.1, and headless Chromium runs it: training
// in the Web Worker, the checkpoint saved to IndexedDB; a reload resumes from that checkpoint.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { launch, guard, watch, screenshot, serve } from './harness.mjs';
import { installPacked, root } from '../packed.mjs';
import { readmeSnippet, quickstartFiles } from '../readme.mjs';

const INDEX_HTML = '<!doctype html>\n<html><head><meta charset="utf-8"><title>webtrain quick start</title></head>\n<body>\n<script type="module" src="/main.js"></script>\n</body></html>\n';

let dir;
let project;
let warnings = [];
let server;
let browser;

before(async () => {
  const vitePath = join(root, 'node_modules/vite/dist/node/index.js');
  assert.ok(existsSync(vitePath), `${vitePath} is missing: run npm install (vite is a dev dependency)`);
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const files = quickstartFiles(readme, 'Quick start: browser', root);
  ({ dir, project } = await installPacked('webtrain-quickstart-web-'));
  await mkdir(join(project, 'public'));
  for (const { name, from } of files) await copyFile(join(root, from), join(project, 'public', name));
  await writeFile(join(project, 'index.html'), INDEX_HTML);
  await writeFile(join(project, 'main.js'), readmeSnippet(readme, 'Quick start: browser'));
  const { build, createLogger } = await import(vitePath);
  const logger = createLogger('warn', { allowClearScreen: false });
  const keep = (msg) => warnings.push(String(msg));
  await build({
    root: project,
    configFile: false,
    logLevel: 'warn',
    customLogger: { ...logger, warn: keep, warnOnce: keep, error: (msg) => keep(`error: ${msg}`) },
    build: { outDir: 'dist', emptyOutDir: true, rollupOptions: { onwarn: (w) => keep(`[${w.plugin ?? w.code}] ${w.message}`) } },
  });
  server = await serve({ dir: join(project, 'dist') });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("the README's browser quick start, built by Vite, trains in a worker in Chromium and resumes from IndexedDB after a reload", async () => {
  assert.deepEqual(warnings, [], `the Vite build warned:\n${warnings.join('\n')}`);
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    const page = watch(await ctx.newPage());
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    const failed = [];
    ctx.on('response', (r) => r.status() !== 200 && failed.push(`${r.status()} ${r.url()}`));
    const visit = async () => {
      await page.waitForFunction(() => /checkpoint saved/.test(document.body.textContent) || document.body.dataset.failed, null, { timeout: 60_000 }).catch(() => {});
      return page.evaluate(() => document.body.textContent.trim());
    };
    await page.goto(`${server.url}/`);
    const first = await visit();
    const m1 = /^one epoch: loss (\S+); checkpoint saved to IndexedDB$/.exec(first);
    assert.ok(m1, `first visit: ${JSON.stringify(first)}\n${page.log.join('\n')}`);
    await page.reload();
    const second = await visit();
    await screenshot(page, 'quickstart-browser');
    const m2 = /^resumed; one epoch: loss (\S+); checkpoint saved to IndexedDB$/.exec(second);
    assert.ok(m2, `second visit: ${JSON.stringify(second)}\n${page.log.join('\n')}`);
    // The second epoch starts from the first one's parameters (and AdamW moments): a lower loss.
    assert.ok(Number(m2[1]) < Number(m1[1]), `resumed loss ${m2[1]} is not below the first ${m1[1]}`);
    assert.deepEqual(errors, [], `page errors:\n${errors.join('\n')}`);
    assert.deepEqual(ctx.offsite, [], 'requests left 127.0.0.1');
    assert.deepEqual(failed, [], 'requests the built page made that the output folder cannot serve');
    assert.ok(server.requests.some((p) => p.endsWith('.wasm')), `the .wasm was not fetched: ${server.requests}`);
  } finally {
    await ctx.close();
  }
});
