// The installed package in a page bundled by esbuild (its JS API, the repository's dev
// dependency; helpers: ./package-bundle.mjs). esbuild copies no assets by itself, so:
//   - as it is (one entry point, no loader): the first API call on the main thread and
//     webtrain.worker() each reject with a WebtrainError naming the option to set —
//     init({ wasmUrl }) and worker({ workerUrl }) — instead of an Emscripten abort; with the
//     worker bundled but no .wasm given, worker() names worker({ wasmUrl }); in esbuild's iife
//     format (no import.meta), both say that the default location is unknown, and why;
//   - configured as docs/api.md says (`loader: { '.wasm': 'file' }` and
//     `import wasmUrl from 'webtrain/webtrain-core.wasm'` passed to init() and worker(), the
//     package's web/worker.js a second entry point named `worker`, next to the page's bundle):
//     the page trains the golden MLP on the main thread and in a worker.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { page, installPackage, devDependency, listFiles, site, assertPageTrained, assertWasmEmitted, dataFiles } from './package-bundle.mjs';

const USER = {
  bundler: 'esbuild',
  imports: "import wasmUrl from 'webtrain/webtrain-core.wasm'; // loader: { '.wasm': 'file' }",
  initOptions: '{ wasmUrl }',
  workerOptions: '{ wasmUrl }',
};

// A page in esbuild's iife format (no top-level await there): the first call on each side.
const IIFE_JS = `import { init, worker } from 'webtrain';
const show = (id, p) => p.then(() => 'done', (e) => \`error: \${e.name}: \${e.message}\`).then((text) => {
  document.getElementById(id).textContent = text;
});
show('status', init()).then(() => show('worker-status', worker()));
`;

let installed;
let bare; // { files, warnings, site } for the page built with no configuration
let workerOnly; // ... with the worker an entry point, but no .wasm loader
let iife; // ... in esbuild's iife format
let configured;

async function bundle(project, outName, options) {
  const esbuild = await devDependency('esbuild', 'lib/main.js');
  const outDir = join(project, outName);
  const result = await esbuild.build({ absWorkingDir: project, bundle: true, format: 'esm', outdir: outName, logLevel: 'silent', ...options });
  await copyFile(join(project, 'index.html'), join(outDir, 'index.html'));
  for (const f of dataFiles) await copyFile(join(project, 'public', f), join(outDir, f));
  return { outDir, files: await listFiles(outDir), warnings: [...result.warnings, ...result.errors].map((m) => m.text), site: await site(outDir) };
}

before(async () => {
  installed = await installPackage('esbuild', page(USER));
  const p = installed.project;
  // The page without the .wasm import and options (what a user tries first).
  await writeFile(join(p, 'bare.js'), page({ bundler: 'esbuild' }).main);
  bare = await bundle(p, 'out-bare', { entryPoints: { main: 'bare.js' } });
  workerOnly = await bundle(p, 'out-worker-only', { entryPoints: { main: 'bare.js', worker: 'node_modules/webtrain/web/worker.js' } });
  await writeFile(join(p, 'iife.js'), IIFE_JS);
  iife = await bundle(p, 'out-iife', { entryPoints: { main: 'iife.js' }, format: 'iife' });
  configured = await bundle(p, 'out', {
    entryPoints: { main: 'main.js', worker: 'node_modules/webtrain/web/worker.js' },
    loader: { '.wasm': 'file' },
  });
});

after(async () => {
  await bare?.site.close();
  await workerOnly?.site.close();
  await iife?.site.close();
  await configured?.site.close();
  await installed?.remove();
});

const WASM_404 = "cannot load webtrain's WebAssembly core from http://127\\.0\\.0\\.1:\\d+/dist/webtrain-core\\.wasm: HTTP 404 Not Found";
const WORKER_404 = "cannot start webtrain's worker from http://127\\.0\\.0\\.1:\\d+/worker\\.js: HTTP 404 Not Found";
const option = (o) => o.replace(/[(){}]/g, '\\$&');

/** The page's two statuses are WebtrainErrors with these messages (regular expression sources); no abort anywhere. */
function assertErrors(r, main, worker) {
  const log = r.log.join('\n');
  assert.match(r.status, new RegExp(`^error: WebtrainError: ${main}`), log);
  assert.match(r.workerStatus, new RegExp(`^error: WebtrainError: ${worker}`), log);
  assert.doesNotMatch(log, /Abort|both async and sync|RuntimeError/);
  assert.deepEqual(r.offsite, []);
}

test('esbuild as it is: the first calls name the options to set, no Emscripten abort', async () => {
  assert.deepEqual(bare.warnings, [], `esbuild warned:\n${bare.warnings.join('\n')}`);
  const r = await bare.site.open('package-esbuild-bare');
  assertErrors(r, `${WASM_404} \\(${option('init({ wasmUrl })')} tells`, `${WORKER_404} \\(${option('worker({ workerUrl })')} tells`);
  assert.match(r.status, /import wasmUrl from 'webtrain\/webtrain-core\.wasm' with esbuild's loader \{ '\.wasm': 'file' \}/);
  assert.match(r.workerStatus, /add node_modules\/webtrain\/web\/worker\.js to esbuild's entryPoints/);
});

test('esbuild with the worker an entry point but no .wasm: worker() names worker({ wasmUrl })', async () => {
  assert.deepEqual(workerOnly.warnings, [], `esbuild warned:\n${workerOnly.warnings.join('\n')}`);
  const r = await workerOnly.site.open('package-esbuild-worker-only');
  assertErrors(r, `${WASM_404} \\(${option('init({ wasmUrl })')} tells`, `${WASM_404} \\(${option('worker({ wasmUrl })')} tells`);
  assert.doesNotMatch(r.workerStatus, /init\(/);
});

test("esbuild's iife format (import.meta is empty): the errors say why the defaults are unknown", async () => {
  assert.ok(iife.warnings.every((w) => /import\.meta/.test(w)), iife.warnings.join('\n'));
  const r = await iife.site.open('package-esbuild-iife');
  const empty = "import\\.meta\\.url is empty here \\(a bundle format without it, such as esbuild's iife: format 'esm' keeps it\\)";
  assertErrors(r, `cannot load webtrain's WebAssembly core from its default location: ${empty} \\(${option('init({ wasmUrl })')} tells`, `cannot start webtrain's worker: .* \\(${option('worker({ workerUrl })')} tells`);
});

test('esbuild configured: emits the .wasm, and the page trains on the main thread and in a worker', async () => {
  assert.deepEqual(configured.warnings, [], `esbuild warned:\n${configured.warnings.join('\n')}`);
  const wasm = await assertWasmEmitted(installed.project, configured.outDir, configured.files, /^webtrain-core-\w+\.wasm$/);
  assert.ok(configured.files.includes('worker.js'), configured.files.join(', '));
  const r = await configured.site.open('package-esbuild');
  await assertPageTrained(r, new RegExp(`^/${wasm.replace('.', '\\.')}$`));
});
