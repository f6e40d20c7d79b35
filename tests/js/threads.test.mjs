// The threaded build in Node: init() loads dist/mt/ (pthreads on worker_threads)
// from this ESM package in Node 20 without flags, chosen by init({ threads }); runtimeInfo()
// says what was loaded; the golden MLP trains to the same bits on both builds and at any thread
// count; the user's process is left as it was (no global Worker, exits when done); a package
// without dist/mt/ falls back to the single-threaded build. Each case runs in a fresh process:
// the core is loaded once per process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const model = join(root, 'tests/golden/cases/mlp_ce_adamw/model.onnx');

/** Runs an ES module script (the package imported from `pkg`) in a fresh Node; returns its JSON output. */
function run(body, pkg = root) {
  const script = `
import * as wt from ${JSON.stringify(join(pkg, 'js/index.js'))};
const out = {};
${body}
console.log(JSON.stringify(out));
`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `node exited with ${r.status} ${r.signal ?? ''}:\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

/** Trains the MLP of the golden case mlp_ce_adamw 6 steps on fixed data; the losses and parameters as hex bits. */
const TRAIN = `
const art = await wt.artifacts.generateArtifacts(${JSON.stringify(model)}, {
  requiresGrad: ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'],
  loss: wt.artifacts.LossType.CrossEntropyLoss, optimizer: wt.artifacts.OptimType.AdamW,
});
const state = await wt.CheckpointState.loadCheckpoint(art.checkpoint);
const module = await wt.Module.create(art.trainingModel, state, art.evalModel);
const optimizer = await wt.Optimizer.create(art.optimizerModel, module);
let seed = 11;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const hex = (f) => Array.from(new Uint32Array(f.buffer, f.byteOffset, f.length), (v) => v.toString(16).padStart(8, '0')).join('');
const batch = 64;
module.train();
const losses = [];
for (let step = 0; step < 6; step++) {
  const x = new wt.Tensor('float32', Float32Array.from({ length: batch * 784 }, () => rand() - 0.5), [batch, 784]);
  const y = new wt.Tensor('int32', Int32Array.from({ length: batch }, () => Math.floor(rand() * 10)), [batch]);
  losses.push(module.runAll(x, y)[0].data[0]);
  optimizer.step();
  module.lazyResetGrad();
}
out.losses = hex(Float32Array.from(losses));
out.params = [...state.parameters].map(([n, p]) => n + ':' + hex(p.data)).join('|');
out.finite = losses.every(Number.isFinite);
`;

const INFO = `
const core = await wt.init(opts);
out.info = wt.runtimeInfo();
out.reportsThreads = typeof core.m._wt_get_threads === 'function';
out.globalWorker = typeof globalThis.Worker;
`;

test('runtimeInfo() is null before the core is loaded', () => {
  const out = run('out.info = wt.runtimeInfo();');
  assert.equal(out.info, null);
});

test("Node, init() (threads 'auto'): the threaded build, no flags; no global Worker left behind; the process exits", () => {
  const out = run(`const opts = {}; ${INFO}`);
  assert.equal(out.info.build, 'threaded');
  assert.equal(out.info.crossOriginIsolated, false);
  assert.equal(out.info.simd, 'wasm-simd128');
  assert.ok(out.info.threads >= 1 && out.info.threads <= 8, `threads ${out.info.threads}`);
  if (!out.reportsThreads) assert.equal(out.info.threads, 1, 'a core without wt_get_threads reports 1');
  assert.equal(out.globalWorker, 'undefined', "Emscripten's global.Worker = worker_threads.Worker leaked into the user's process");
});

test('init({ threads: 2 }): threaded, 2 threads where the core reports them; threads: 64 is capped at 8', () => {
  const two = run(`const opts = { threads: 2 }; ${INFO}`);
  assert.equal(two.info.build, 'threaded');
  assert.equal(two.info.threads, two.reportsThreads ? 2 : 1);
  const many = run(`const opts = { threads: 64 }; ${INFO}`);
  assert.equal(many.info.build, 'threaded');
  assert.ok(many.info.threads <= 8, `threads ${many.info.threads}`);
});

test('init({ threads: 1 }): the single-threaded build', () => {
  const out = run(`const opts = { threads: 1 }; ${INFO}`);
  assert.deepEqual(out.info, { threads: 1, simd: 'wasm-simd128', crossOriginIsolated: false, build: 'single', backend: 'wasm', adapter: null });
});

test('a global Worker the user set is left as it was', () => {
  const out = run(`class Mine {} globalThis.Worker = Mine; const opts = { threads: 2 }; ${INFO} out.same = globalThis.Worker === Mine;`);
  assert.equal(out.info.build, 'threaded');
  assert.equal(out.same, true);
});

test('init({ threads }) refuses what is not \'auto\' or a whole number >= 1', () => {
  const out = run(`
out.errors = [];
for (const threads of [0, -1, 1.5, 'many', null, Number.NaN]) {
  try { await wt.init({ threads }); out.errors.push('loaded'); } catch (e) { out.errors.push(e.name + ': ' + e.message); }
}
out.after = (await wt.init({ threads: 1 })) !== null && wt.runtimeInfo().build;
`);
  assert.equal(out.errors.length, 6);
  for (const e of out.errors) assert.match(e, /^WebtrainError: init\(\{ threads \}\): expected 'auto' or a whole number >= 1, got /);
  assert.equal(out.after, 'single', 'a refused init leaves init() usable');
});

test("the golden MLP trains to the same bits on the single-threaded build and the threaded one at 2, 4 and 'auto' threads", () => {
  const single = run(`await wt.init({ threads: 1 }); out.build = wt.runtimeInfo().build; ${TRAIN}`);
  assert.equal(single.build, 'single');
  assert.ok(single.finite);
  for (const threads of [2, 4, "'auto'"]) {
    const mt = run(`await wt.init({ threads: ${threads} }); out.build = wt.runtimeInfo().build; ${TRAIN}`);
    assert.equal(mt.build, 'threaded');
    assert.equal(mt.losses, single.losses, `losses at threads ${threads}`);
    assert.equal(mt.params, single.params, `parameters at threads ${threads}`);
  }
});

test('a copy of the package without dist/mt/ loads the single-threaded build; an explicit threadedUrl that is not there is an error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'webtrain-nomt-'));
  try {
    cpSync(join(root, 'js'), join(dir, 'js'), { recursive: true });
    for (const f of ['webtrain-core.mjs', 'webtrain-core.wasm']) cpSync(join(root, 'dist', f), join(dir, 'dist', f));
    cpSync(join(root, 'package.json'), join(dir, 'package.json'));
    const out = run(`const opts = { threads: 2 }; ${INFO}`, dir);
    assert.deepEqual(out.info, { threads: 1, simd: 'wasm-simd128', crossOriginIsolated: false, build: 'single', backend: 'wasm', adapter: null });
    const bad = run(`
try { await wt.init({ threads: 2, threadedUrl: ${JSON.stringify(join(dir, 'dist/mt/webtrain-core-mt.mjs'))} }); out.r = wt.runtimeInfo(); } catch (e) { out.r = e.name + ': ' + e.message; }`, dir);
    assert.match(String(bad.r), /^WebtrainError: cannot load webtrain's WebAssembly core from .*webtrain-core-mt\.wasm: .*\(init\(\{ threadedUrl \}\) tells webtrain where webtrain-core-mt\.mjs is served/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a threaded build whose thread worker does not start: the single-threaded build by default, an error naming it with threadedUrl', () => {
  const dir = mkdtempSync(join(tmpdir(), 'webtrain-noworker-'));
  try {
    cpSync(join(root, 'js'), join(dir, 'js'), { recursive: true });
    cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
    cpSync(join(root, 'package.json'), join(dir, 'package.json'));
    rmSync(join(dir, 'dist/mt/webtrain-core-mt.worker.js'));
    const out = run(`const opts = { threads: 2 }; ${INFO}`, dir);
    assert.deepEqual(out.info, { threads: 1, simd: 'wasm-simd128', crossOriginIsolated: false, build: 'single', backend: 'wasm', adapter: null });
    const bad = run(`
try { await wt.init({ threads: 2, threadedUrl: ${JSON.stringify(join(dir, 'dist/mt/webtrain-core-mt.mjs'))} }); out.r = wt.runtimeInfo(); } catch (e) { out.r = e.name + ': ' + e.message; }`, dir);
    assert.match(String(bad.r), /^WebtrainError: cannot load webtrain's WebAssembly core from .*webtrain-core-mt\.worker\.js: its thread worker did not start/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
