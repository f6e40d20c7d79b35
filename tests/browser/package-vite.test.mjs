// The package as a user installs it, in a bundler: `npm pack` the repository, install the
// tarball into an empty project (offline), write a page that does `import { ... } from
// 'webtrain'`, build it with Vite (production build, the repository's own vite dev dependency
// through its JS API — nothing comes from the network), serve the output folder from 127.0.0.1
// and train the golden MLP in headless Chromium. Checks: Vite resolves the "browser" export
// condition (web/index.js), emits the .wasm as an asset and warns about nothing (in particular
// no node: built-in "externalized for browser compatibility"); the page fetches only its own
// files, logs no console errors, and the losses it writes into the DOM match PyTorch's first
// step and then decrease.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { root, launch, guard, watch, screenshot } from './harness.mjs';

const caseDir = join(root, 'tests/golden/cases/mlp_ce_adamw');
const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm' };

let dir; // temporary: the tarball, an npm cache, the user's project
let project;
let built; // { warnings, files } of the Vite build
let server;
let browser;

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 60_000, env: { ...process.env, npm_config_update_notifier: 'false' } });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  assert.equal(r.status, 0, `${cmd} ${args[0]} exited with ${r.status}:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

async function listFiles(d, prefix = '') {
  const out = [];
  for (const e of await readdir(d, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...(await listFiles(join(d, e.name), `${prefix}${e.name}/`)));
    else out.push(`${prefix}${e.name}`);
  }
  return out.sort();
}

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>webtrain, bundled by Vite</title>
<style>body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; } #status { font-weight: 600; }</style></head>
<body>
<h1>webtrain from an npm install, bundled by Vite</h1>
<div>status: <span id="status">loading…</span> · WebAssembly SIMD: <span id="simd">?</span></div>
<ol id="losses"></ol>
<script type="module" src="/main.js"></script>
</body>
</html>
`;

// What a user writes: the golden model and one batch as static files (public/), artifacts
// generated in the browser, three AdamW steps on that batch.
const MAIN_JS = `import { artifacts, CheckpointState, Module, Optimizer, Tensor, simdSupported } from 'webtrain';

const status = document.getElementById('status');
async function bytes(name) {
  const res = await fetch(new URL(name, document.baseURI));
  if (!res.ok) throw new Error(\`fetch \${name}: HTTP \${res.status}\`);
  return new Uint8Array(await res.arrayBuffer());
}

try {
  // simdSupported exists only in the browser entry (web/index.js): Vite picked the "browser" condition.
  document.getElementById('simd').textContent = String(simdSupported());
  status.textContent = 'training…';
  const [model, x, y] = await Promise.all([bytes('model.onnx'), bytes('step0__input.bin'), bytes('step0__labels.bin')]);
  const art = await artifacts.generateArtifacts(model, {
    requiresGrad: ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'],
    loss: artifacts.LossType.CrossEntropyLoss,
    optimizer: artifacts.OptimType.AdamW,
  });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  optimizer.setLearningRate(0.001);
  const input = new Tensor('float32', new Float32Array(x.buffer), [8, 784]);
  const labels = new Tensor('int32', new Int32Array(y.buffer), [8]);
  module.train();
  for (let step = 0; step < 3; step++) {
    const loss = module.runAll(input, labels)[0].data[0];
    optimizer.step();
    module.lazyResetGrad();
    const li = document.createElement('li');
    li.className = 'loss';
    li.textContent = String(loss);
    document.getElementById('losses').append(li);
  }
  optimizer.release();
  module.release();
  state.release();
  status.textContent = 'done';
} catch (err) {
  status.textContent = \`error: \${err.message}\`;
  console.error(err);
}
`;

/** Serves the Vite output folder (only it) from 127.0.0.1; records every request and its status. */
async function serveDir(base) {
  const requests = [];
  const srv = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let rel = normalize(path).replace(/^\/+/, '');
    if (rel === '' || rel.endsWith('/')) rel += 'index.html';
    const file = join(base, rel);
    let status = 404;
    try {
      if (rel.includes('..')) throw new Error('outside');
      const s = await stat(file);
      if (!s.isFile()) throw new Error('not a file');
      status = 200;
      res.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream', 'content-length': s.size, 'cache-control': 'no-store' });
      createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
    requests.push({ path, status });
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${srv.address().port}`,
    requests,
    close: () => new Promise((resolve) => {
      srv.closeAllConnections?.();
      srv.close(() => resolve());
    }),
  };
}

before(async () => {
  for (const f of ['dist/webtrain-core.mjs', 'dist/webtrain-core.wasm']) {
    assert.ok(existsSync(join(root, f)), `${f} is missing: the package ships the WebAssembly build; run \`npm run build\` first`);
  }
  const vitePath = join(root, 'node_modules/vite/dist/node/index.js');
  assert.ok(existsSync(vitePath), `${vitePath} is missing: run npm install (vite is a dev dependency)`);

  dir = await mkdtemp(join(tmpdir(), 'webtrain-vite-'));
  project = join(dir, 'project');
  // A fresh npm cache and --offline: nothing comes from an earlier install or the registry.
  const npmFlags = ['--cache', join(dir, 'npm-cache'), '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'];
  const [{ filename }] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir, ...npmFlags], root));
  await mkdir(join(project, 'public'), { recursive: true });
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'webtrain-vite-user', version: '1.0.0', private: true, type: 'module' }, null, 2));
  run('npm', ['install', join(dir, filename), ...npmFlags], project);
  await writeFile(join(project, 'index.html'), INDEX_HTML);
  await writeFile(join(project, 'main.js'), MAIN_JS);
  for (const f of ['model.onnx', 'step0__input.bin', 'step0__labels.bin']) await copyFile(join(caseDir, f), join(project, 'public', f));

  // The production build, through Vite's JS API; every warning Vite or Rolldown reports is kept.
  const { build, createLogger } = await import(vitePath);
  const warnings = [];
  const logger = createLogger('warn', { allowClearScreen: false });
  const customLogger = {
    ...logger,
    warn: (msg, opts) => warnings.push(String(msg)),
    warnOnce: (msg, opts) => warnings.push(String(msg)),
    error: (msg, opts) => warnings.push(`error: ${msg}`),
  };
  await build({
    root: project,
    configFile: false,
    logLevel: 'warn',
    customLogger,
    build: {
      outDir: 'dist',
      emptyOutDir: true,
      rollupOptions: { onwarn: (w) => warnings.push(`[${w.plugin ?? w.code}] ${w.message}`) },
    },
  });
  built = { warnings, files: await listFiles(join(project, 'dist')) };

  server = await serveDir(join(project, 'dist'));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('Vite builds the installed package without warnings and emits the .wasm as an asset', async () => {
  assert.deepEqual(built.warnings, [], `the Vite build warned:\n${built.warnings.join('\n')}`);
  const wasm = built.files.filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, `expected exactly one .wasm in the build output, got: ${built.files.join(', ')}`);
  assert.match(wasm[0], /^assets\/webtrain-core-[\w-]+\.wasm$/);
  const bytes = await readFile(join(project, 'dist', wasm[0]));
  const shipped = await readFile(join(project, 'node_modules/webtrain/dist/webtrain-core.wasm'));
  assert.ok(bytes.equals(shipped), 'the emitted .wasm differs from the packaged one');
  // No node: built-in was stubbed out for the browser.
  assert.ok(!built.files.some((f) => /browser-external/.test(f)), `a Node built-in was externalized: ${built.files.join(', ')}`);
  for (const f of ['index.html', 'model.onnx', 'step0__input.bin', 'step0__labels.bin']) assert.ok(built.files.includes(f), `${f} is not in the build output`);
});

test('the Vite-built page trains the golden MLP in Chromium: losses appear and decrease', async () => {
  const c = JSON.parse(await readFile(join(caseDir, 'case.json'), 'utf8'));
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    const page = watch(await ctx.newPage());
    const errors = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => !/^(loading|training)/.test(document.getElementById('status').textContent), null, { timeout: 30_000 });
    const r = await page.evaluate(() => ({
      status: document.getElementById('status').textContent,
      simd: document.getElementById('simd').textContent,
      losses: [...document.querySelectorAll('#losses li.loss')].map((li) => Number(li.textContent)),
    }));
    await screenshot(page, 'package-vite');
    assert.equal(r.status, 'done', `the page did not finish:\n${page.log.join('\n')}`);
    assert.equal(r.simd, 'true');
    assert.equal(r.losses.length, 3, `expected three losses, got ${JSON.stringify(r.losses)}`);
    for (const l of r.losses) assert.ok(Number.isFinite(l) && l > 0, `loss ${l} is not a positive number`);
    // The first step is PyTorch's step 0 on the same batch; training on it lowers the loss.
    const want = c.steps[0].loss;
    assert.ok(Math.abs(r.losses[0] - want) <= 1e-4 * Math.abs(want), `first loss ${r.losses[0]}, PyTorch ${want}`);
    assert.ok(r.losses[1] < r.losses[0] && r.losses[2] < r.losses[1], `the loss did not decrease: ${r.losses}`);

    assert.deepEqual(errors, [], `console errors:\n${errors.join('\n')}`);
    assert.deepEqual(ctx.offsite, [], 'requests left 127.0.0.1');
    const failed = server.requests.filter((q) => q.status !== 200);
    assert.deepEqual(failed, [], 'requests the built page made that the output folder cannot serve');
    const wasm = server.requests.filter((q) => q.path.endsWith('.wasm')).map((q) => q.path);
    assert.equal(wasm.length, 1, `the .wasm was fetched ${wasm.length} times: ${wasm}`);
    assert.match(wasm[0], /^\/assets\/webtrain-core-[\w-]+\.wasm$/, 'the page did not load the .wasm Vite emitted');
  } finally {
    await ctx.close();
  }
});
