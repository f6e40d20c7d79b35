// The installed package in a page bundled by Vite (production build through its JS API, the
// repository's dev dependency; helpers: ./package-bundle.mjs), with no configuration at all.
// Checks: Vite resolves the "browser" export condition (web/index.js), emits the .wasm as an
// asset and bundles the worker (new Worker(new URL('./worker.js', import.meta.url))), and warns
// about nothing (in particular no node: built-in "externalized for browser compatibility"); the
// page fetches only its own files, logs no console errors, and the losses it writes into the
// DOM, on the main thread and in a worker, match PyTorch's first step and then decrease.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { page, installPackage, devDependency, listFiles, site, assertPageTrained, assertWasmEmitted, dataFiles } from './package-bundle.mjs';

let installed;
let outDir;
let built; // { warnings, files } of the Vite build
let served;

before(async () => {
  installed = await installPackage('vite', page({ bundler: 'Vite' }));
  const { build, createLogger } = await devDependency('vite', 'dist/node/index.js');
  // Every warning Vite or Rolldown reports is kept.
  const warnings = [];
  const logger = createLogger('warn', { allowClearScreen: false });
  const customLogger = {
    ...logger,
    warn: (msg) => warnings.push(String(msg)),
    warnOnce: (msg) => warnings.push(String(msg)),
    error: (msg) => warnings.push(`error: ${msg}`),
  };
  await build({
    root: installed.project,
    configFile: false,
    logLevel: 'warn',
    customLogger,
    build: {
      outDir: 'dist',
      emptyOutDir: true,
      rollupOptions: { onwarn: (w) => warnings.push(`[${w.plugin ?? w.code}] ${w.message}`) },
    },
  });
  outDir = join(installed.project, 'dist');
  built = { warnings, files: await listFiles(outDir) };
  served = await site(outDir);
});

after(async () => {
  await served?.close();
  await installed?.remove();
});

test('Vite builds the installed package without warnings and emits the .wasm as an asset', async () => {
  assert.deepEqual(built.warnings, [], `the Vite build warned:\n${built.warnings.join('\n')}`);
  await assertWasmEmitted(installed.project, outDir, built.files, /^assets\/webtrain-core-[\w-]+\.wasm$/);
  // The worker is bundled (one script of its own), not copied as it is.
  assert.ok(built.files.some((f) => /^assets\/worker-[\w-]+\.js$/.test(f)), `no bundled worker in the build output: ${built.files.join(', ')}`);
  // No node: built-in was stubbed out for the browser.
  assert.ok(!built.files.some((f) => /browser-external/.test(f)), `a Node built-in was externalized: ${built.files.join(', ')}`);
  for (const f of ['index.html', ...dataFiles]) assert.ok(built.files.includes(f), `${f} is not in the build output`);
});

test('the Vite-built page trains the golden MLP in Chromium, on the main thread and in a worker', async () => {
  const r = await served.open('package-vite');
  await assertPageTrained(r, /^\/assets\/webtrain-core-[\w-]+\.wasm$/);
});
