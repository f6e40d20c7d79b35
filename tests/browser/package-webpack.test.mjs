// The installed package in a page bundled by webpack 5 (production mode through its JS API,
// the repository's dev dependency; helpers: ./package-bundle.mjs), with no configuration but
// the entry and output: webpack follows new URL('../dist/webtrain-core.wasm', import.meta.url)
// (emits the .wasm as an asset) and new Worker(new URL('./worker.js', import.meta.url))
// (bundles the worker) by itself. Checks: no warnings or errors (the size hints for the
// 700 kB .wasm are off: the application's choice), and the page trains the golden MLP on the
// main thread and in a worker.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { page, installPackage, devDependency, listFiles, site, assertPageTrained, assertWasmEmitted, dataFiles } from './package-bundle.mjs';

let installed;
let outDir;
let built; // { warnings, files } of the webpack build
let served;

before(async () => {
  installed = await installPackage('webpack', page({ bundler: 'webpack' }));
  const { default: webpack } = await devDependency('webpack', 'lib/index.js');
  outDir = join(installed.project, 'dist');
  const stats = await new Promise((resolve, reject) => {
    webpack(
      {
        mode: 'production',
        context: installed.project,
        entry: './main.js',
        output: { path: outDir, filename: 'main.js', clean: true },
        performance: { hints: false },
      },
      (err, s) => (err ? reject(err) : resolve(s)),
    );
  });
  const info = stats.toJson({ all: false, warnings: true, errors: true });
  await copyFile(join(installed.project, 'index.html'), join(outDir, 'index.html'));
  for (const f of dataFiles) await copyFile(join(installed.project, 'public', f), join(outDir, f));
  built = { warnings: [...info.warnings, ...info.errors].map((w) => w.message), files: await listFiles(outDir) };
  served = await site(outDir);
});

after(async () => {
  await served?.close();
  await installed?.remove();
});

test('webpack 5 builds the installed package without warnings and emits the .wasm', async () => {
  assert.deepEqual(built.warnings, [], `webpack warned:\n${built.warnings.join('\n')}`);
  await assertWasmEmitted(installed.project, outDir, built.files, /^[\da-f]+\.wasm$/);
});

test('the webpack-built page trains the golden MLP in Chromium, on the main thread and in a worker', async () => {
  const r = await served.open('package-webpack');
  await assertPageTrained(r, /^\/[\da-f]+\.wasm$/);
});
