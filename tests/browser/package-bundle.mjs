// Shared by the bundler tests (tests/browser/package-{vite,esbuild,webpack}.test.mjs): the
// package as a user installs it — `npm pack` the repository, install the tarball into an empty
// project (a fresh npm cache, --offline: nothing comes from an earlier install or the registry) —
// the page a user writes (main.js: three AdamW steps on the golden MLP on the main thread, then
// three in a worker, webtrain.worker()), a static server for the bundler's output folder (only
// it) on 127.0.0.1, and the checks of what the built page did in headless Chromium.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { root, launch, guard, watch, screenshot } from './harness.mjs';

export const caseDir = join(root, 'tests/golden/cases/mlp_ce_adamw');
const DATA = ['model.onnx', 'step0__input.bin', 'step0__labels.bin'];
const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm' };

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 60_000, env: { ...process.env, npm_config_update_notifier: 'false' } });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  assert.equal(r.status, 0, `${cmd} ${args[0]} exited with ${r.status}:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

/** Every file below d, as sorted paths relative to it. */
export async function listFiles(d, prefix = '') {
  const out = [];
  for (const e of await readdir(d, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...(await listFiles(join(d, e.name), `${prefix}${e.name}/`)));
    else out.push(`${prefix}${e.name}`);
  }
  return out.sort();
}

/** The bundler's module from the repository's node_modules (a dev dependency), checked to be there. */
export async function devDependency(name, path) {
  const file = join(root, 'node_modules', name, path);
  assert.ok(existsSync(file), `${file} is missing: run npm install (${name} is a dev dependency)`);
  return import(file);
}

/**
 * The page a user writes. `bundler` names it; `imports` are extra import lines; `initOptions`
 * and `workerOptions` are JavaScript expressions (null: the call is left out / made without
 * options). The main thread and the worker each write a status ('done' or 'error: Name:
 * message') and their losses into the DOM.
 */
export function page({ bundler, imports = '', initOptions = null, workerOptions = null }) {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>webtrain, bundled by ${bundler}</title>
<style>body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; } .status { font-weight: 600; }</style></head>
<body>
<h1>webtrain from an npm install, bundled by ${bundler}</h1>
<div>WebAssembly SIMD: <span id="simd">?</span></div>
<div>main thread: <span class="status" id="status">loading…</span></div>
<ol id="losses"></ol>
<div>worker: <span class="status" id="worker-status">waiting…</span></div>
<ol id="worker-losses"></ol>
<script type="module" src="./main.js"></script>
</body>
</html>
`;
  // The golden model and one batch are static files next to the page; artifacts are generated
  // in the browser (on each side); three AdamW steps on that batch.
  const main = `import { artifacts, CheckpointState, init, Module, Optimizer, Tensor, simdSupported, worker } from 'webtrain';
${imports}
const REQUIRES_GRAD = ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'];
async function bytes(name) {
  const res = await fetch(new URL(name, document.baseURI));
  if (!res.ok) throw new Error(\`fetch \${name}: HTTP \${res.status}\`);
  return new Uint8Array(await res.arrayBuffer());
}
function show(list, loss) {
  const li = document.createElement('li');
  li.className = 'loss';
  li.textContent = String(loss);
  document.getElementById(list).append(li);
}
async function side(statusId, train) {
  const status = document.getElementById(statusId);
  status.textContent = 'training…';
  try {
    await train();
    status.textContent = 'done';
  } catch (err) {
    status.textContent = \`error: \${err.name}: \${err.message}\`;
    console.warn(err);
  }
}
const [x, y] = await Promise.all([bytes('step0__input.bin'), bytes('step0__labels.bin')]);

// simdSupported exists only in the browser entry (web/index.js): the bundler picked the "browser" condition.
document.getElementById('simd').textContent = String(simdSupported());

await side('status', async () => {
  ${initOptions === null ? '' : `await init(${initOptions});`}
  const art = await artifacts.generateArtifacts(await bytes('model.onnx'), {
    requiresGrad: REQUIRES_GRAD,
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
    show('losses', module.runAll(input, labels)[0].data[0]);
    optimizer.step();
    module.lazyResetGrad();
  }
  optimizer.release();
  module.release();
  state.release();
});

await side('worker-status', async () => {
  const w = await worker(${workerOptions ?? ''});
  try {
    const art = await w.artifacts.generateArtifacts('model.onnx', { requiresGrad: REQUIRES_GRAD, loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
    const state = await w.CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await w.Module.create(art.trainingModel, state, art.evalModel);
    const optimizer = await w.Optimizer.create(art.optimizerModel, module);
    await optimizer.setLearningRate(0.001);
    const input = new Tensor('float32', new Float32Array(x.buffer), [8, 784]);
    const labels = new Tensor('int32', new Int32Array(y.buffer), [8]);
    await module.train();
    for (let step = 0; step < 3; step++) {
      show('worker-losses', (await module.runAll(input, labels))[0].data[0]);
      await optimizer.step();
      await module.lazyResetGrad();
    }
  } finally {
    w.terminate();
  }
});
`;
  return { html, main };
}

/**
 * A temporary folder with the packed package installed into `project` (an empty ESM project),
 * the page's source (index.html, main.js) and the golden data in `project/<dataDir>`.
 * Returns { dir, project, remove }.
 */
export async function installPackage(name, source, { dataDir = 'public' } = {}) {
  for (const f of ['dist/webtrain-core.mjs', 'dist/webtrain-core.wasm']) {
    assert.ok(existsSync(join(root, f)), `${f} is missing: the package ships the WebAssembly build; run \`npm run build\` first`);
  }
  const dir = await mkdtemp(join(tmpdir(), `webtrain-${name}-`));
  const project = join(dir, 'project');
  const npmFlags = ['--cache', join(dir, 'npm-cache'), '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'];
  const [{ filename }] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir, ...npmFlags], root));
  await mkdir(join(project, dataDir), { recursive: true });
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: `webtrain-${name}-user`, version: '1.0.0', private: true, type: 'module' }, null, 2));
  run('npm', ['install', join(dir, filename), ...npmFlags], project);
  await writeFile(join(project, 'index.html'), source.html);
  await writeFile(join(project, 'main.js'), source.main);
  for (const f of DATA) await copyFile(join(caseDir, f), join(project, dataDir, f));
  return { dir, project, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Serves a build output folder (only it) from 127.0.0.1; records every request and its status. */
export async function serveDir(base) {
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

/**
 * A build output folder served, and Chromium: `open(name)` loads the page, waits until both
 * sides have finished and returns what the page wrote ({ simd, status, losses, workerStatus,
 * workerLosses }), its console errors, the requests it made and whether any left 127.0.0.1.
 */
export async function site(outDir) {
  const server = await serveDir(outDir);
  const browser = await launch();
  return {
    server,
    async open(name) {
      server.requests.length = 0;
      const ctx = await guard(await browser.newContext(), server.url);
      try {
        const page = watch(await ctx.newPage());
        const errors = [];
        page.on('console', (m) => {
          if (m.type() === 'error') errors.push(m.text());
        });
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(`${server.url}/`);
        const finished = () => !/^(loading|training|waiting)/.test(document.getElementById('worker-status').textContent);
        await page.waitForFunction(finished, null, { timeout: 60_000 });
        const r = await page.evaluate(() => {
          const losses = (id) => [...document.querySelectorAll(`#${id} li.loss`)].map((li) => Number(li.textContent));
          const text = (id) => document.getElementById(id).textContent;
          return { simd: text('simd'), status: text('status'), losses: losses('losses'), workerStatus: text('worker-status'), workerLosses: losses('worker-losses') };
        });
        await screenshot(page, name);
        return { ...r, errors, log: page.log, offsite: ctx.offsite, requests: [...server.requests] };
      } finally {
        await ctx.close();
      }
    },
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}

/** Three steps' losses: the first is PyTorch's step 0 on the same batch; training lowers the loss. */
export async function assertTrained(losses, where) {
  const c = JSON.parse(await readFile(join(caseDir, 'case.json'), 'utf8'));
  assert.equal(losses.length, 3, `${where}: expected three losses, got ${JSON.stringify(losses)}`);
  for (const l of losses) assert.ok(Number.isFinite(l) && l > 0, `${where}: loss ${l} is not a positive number`);
  const want = c.steps[0].loss;
  assert.ok(Math.abs(losses[0] - want) <= 1e-4 * Math.abs(want), `${where}: first loss ${losses[0]}, PyTorch ${want}`);
  assert.ok(losses[1] < losses[0] && losses[2] < losses[1], `${where}: the loss did not decrease: ${losses}`);
}

/**
 * The page trained on both sides: SIMD seen, both statuses 'done', the losses right, no console
 * error, nothing fetched from elsewhere, every request served, and the .wasm fetched once by
 * the page and once by the worker, from a path matching `wasmPath`.
 */
export async function assertPageTrained(r, wasmPath) {
  const log = r.log.join('\n');
  assert.equal(r.simd, 'true');
  assert.equal(r.status, 'done', `the main thread did not finish:\n${log}`);
  assert.equal(r.workerStatus, 'done', `the worker did not finish:\n${log}`);
  await assertTrained(r.losses, 'main thread');
  await assertTrained(r.workerLosses, 'worker');
  assert.deepEqual(r.workerLosses, r.losses, 'the worker computed other losses than the main thread');
  assert.deepEqual(r.errors, [], `console errors:\n${r.errors.join('\n')}`);
  assert.deepEqual(r.offsite, [], 'requests left 127.0.0.1');
  assert.deepEqual(r.requests.filter((q) => q.status !== 200), [], 'requests the built page made that the output folder cannot serve');
  const wasm = r.requests.filter((q) => q.path.endsWith('.wasm')).map((q) => q.path);
  assert.equal(wasm.length, 2, `the .wasm was fetched ${wasm.length} times (expected: page and worker): ${wasm}`);
  for (const p of wasm) assert.match(p, wasmPath, 'the page did not load the .wasm the bundler emitted');
}

/** The build output holds exactly one .wasm, matching `pattern`, byte-identical to the packaged one. */
export async function assertWasmEmitted(project, outDir, files, pattern) {
  const wasm = files.filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, `expected exactly one .wasm in the build output, got: ${files.join(', ')}`);
  assert.match(wasm[0], pattern);
  const bytes = await readFile(join(outDir, wasm[0]));
  const shipped = await readFile(join(project, 'node_modules/webtrain/dist/webtrain-core.wasm'));
  assert.ok(bytes.equals(shipped), 'the emitted .wasm differs from the packaged one');
  return wasm[0];
}

export { DATA as dataFiles };
