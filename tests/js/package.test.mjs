// The package as a user installs it: `npm pack` the repository, install the tarball into an
// empty project (offline: the package has no runtime dependencies), and use it from there —
// train a model through `import 'webtrain'`, reach package.json and the .wasm through the
// package's exports, and type-check a TypeScript file against the installed declarations.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installPacked, root, run, ok } from '../packed.mjs';

const model = fileURLToPath(new URL('../golden/cases/mlp_ce_adamw/model.onnx', import.meta.url));
const tsc = join(root, 'node_modules/.bin/tsc');

let dir; // temporary: the tarball, an npm cache, and the user's project
let project;

before(async () => {
  ({ dir, project } = await installPacked('webtrain-package-'));
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the tarball installs the files the package needs and nothing from the work tree', async () => {
  const installed = join(project, 'node_modules/webtrain');
  for (const f of ['package.json', 'README.md', 'docs/api.md', 'docs/ops.md', 'js/index.js', 'js/index.d.ts', 'dist/webtrain-core.mjs', 'dist/webtrain-core.wasm', 'dist/webtrain-core-fma.wasm', 'dist/mt/package.json', 'dist/mt/webtrain-core-mt.mjs', 'dist/mt/webtrain-core-mt.wasm', 'dist/mt/webtrain-core-mt-fma.wasm', 'dist/mt/webtrain-core-mt.worker.js']) {
    assert.ok(existsSync(join(installed, f)), `${f} is not in the installed package`);
  }
  for (const f of ['src', 'tests', 'build', 'scripts', 'node_modules']) assert.ok(!existsSync(join(installed, f)), `${f}/ should not be in the package`);
  // Test helpers live under tests/, not in the published js/.
  assert.ok(!existsSync(join(installed, 'js/testing.js')), 'js/testing.js (a test helper) is in the package');
  const pkg = JSON.parse(await readFile(join(project, 'package.json'), 'utf8'));
  assert.ok(pkg.dependencies?.webtrain, 'webtrain is not recorded as a dependency of the project');
});

test('a user script trains through `import "webtrain"`', async () => {
  const script = `
import { CheckpointState, Module, Optimizer, Tensor, artifacts, init, runtimeInfo } from 'webtrain';
await init({ threads: 2 });
console.log('build', runtimeInfo().build);
const art = await artifacts.generateArtifacts(${JSON.stringify(model)}, {
  requiresGrad: ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'],
  loss: artifacts.LossType.CrossEntropyLoss,
  optimizer: artifacts.OptimType.AdamW,
});
const state = await CheckpointState.loadCheckpoint(art.checkpoint);
const module = await Module.create(art.trainingModel, state, art.evalModel);
const optimizer = await Optimizer.create(art.optimizerModel, module);
optimizer.setLearningRate(0.001);
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const batch = 16;
const x = new Tensor('float32', Float32Array.from({ length: batch * 784 }, () => rand() - 0.5), [batch, 784]);
const y = new Tensor('int32', Int32Array.from({ length: batch }, () => Math.floor(rand() * 10)), [batch]);
module.train();
for (let step = 0; step < 2; step++) {
  const loss = module.runAll(x, y)[0];
  optimizer.step();
  module.lazyResetGrad();
  console.log('loss', loss.data[0]);
}
optimizer.release();
module.release();
state.release();
`;
  await writeFile(join(project, 'train.mjs'), script);
  const r = ok(run(process.execPath, ['train.mjs'], project), 'node train.mjs (in the user project)');
  const losses = [...r.stdout.matchAll(/^loss (\S+)$/gm)].map((m) => Number(m[1]));
  assert.equal(losses.length, 2, `expected two loss lines:\n${r.output}`);
  // The installed package's threaded build (dist/mt/, CommonJS worker beside an ESM package) runs in Node without flags.
  assert.match(r.stdout, /^build threaded$/m, r.output);
  for (const l of losses) assert.ok(Number.isFinite(l) && l > 0, `loss ${l} is not a positive number`);
  // Random labels over 10 classes start near ln(10); AdamW at lr 0.001 lowers the loss on the same batch.
  assert.ok(losses[0] > 1 && losses[0] < 5, `first loss ${losses[0]} is far from ln(10)`);
  assert.ok(losses[1] < losses[0], `the loss did not decrease: ${losses}`);
  // It ran the installed copy, not the work tree.
  assert.doesNotMatch(r.output, new RegExp(root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + 'js/'));
});

test('package.json and the .wasm are reachable through the exports', async () => {
  const script = `
import { readFile } from 'node:fs/promises';
const { default: pkg } = await import('webtrain/package.json', { with: { type: 'json' } });
const wasmUrl = import.meta.resolve('webtrain/webtrain-core.wasm');
const wasm = await readFile(new URL(wasmUrl));
console.log(JSON.stringify({ name: pkg.name, version: pkg.version, wasmUrl, magic: [...wasm.subarray(0, 4)], ok: WebAssembly.validate(wasm) }));
let internal;
try { import.meta.resolve('webtrain/js/core.js'); internal = 'resolved'; } catch (err) { internal = err.code; }
console.log(JSON.stringify({ internal }));
`;
  await writeFile(join(project, 'exports.mjs'), script);
  const r = ok(run(process.execPath, ['exports.mjs'], project), 'node exports.mjs (in the user project)');
  const [first, second] = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const own = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  assert.equal(first.name, 'webtrain');
  assert.equal(first.version, own.version);
  assert.ok(first.wasmUrl.startsWith(`file://${project}/node_modules/webtrain/`), first.wasmUrl);
  assert.deepEqual(first.magic, [0x00, 0x61, 0x73, 0x6d], 'webtrain/webtrain-core.wasm is not a WebAssembly binary');
  assert.equal(first.ok, true, 'webtrain/webtrain-core.wasm does not validate');
  // Internal modules stay private: only the declared subpaths are exported.
  assert.equal(second.internal, 'ERR_PACKAGE_PATH_NOT_EXPORTED');
});

test('TypeScript finds the installed declarations (NodeNext: the Node entry\'s; Bundler: the browser entry\'s)', async () => {
  assert.ok(existsSync(tsc), `${tsc} is missing: run npm install (typescript is a dev dependency)`);
  await writeFile(
    join(project, 'main.ts'),
    `import { Tensor, Module, artifacts, onnxblock, type InitOptions } from 'webtrain';
const options: InitOptions = {};
const t: Tensor<'float32'> = new Tensor('float32', new Float32Array(4), [2, 2]);
const art: artifacts.Artifacts = await artifacts.generateArtifacts('model.onnx', { loss: artifacts.LossType.MSELoss, optimizer: 'SGD', ...options });
const m: Module = await Module.create(art.trainingModel, null!, art.evalModel);
const loss = m.runAll(t, t)[0];
const add = new onnxblock.blocks.Add();
// @ts-expect-error the declarations are really in use: steps take no arguments
m.lazyResetGrad(1);
export { loss, add };
`,
  );
  for (const resolution of ['NodeNext', 'Bundler']) {
    const config = {
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        module: resolution === 'NodeNext' ? 'NodeNext' : 'ESNext',
        moduleResolution: resolution,
        lib: ['ES2022', 'DOM'],
        types: [],
        skipLibCheck: false,
      },
      files: ['main.ts'],
    };
    await writeFile(join(project, `tsconfig.${resolution}.json`), JSON.stringify(config, null, 2));
    const r = run(tsc, ['-p', `tsconfig.${resolution}.json`, '--traceResolution'], project);
    const errors = r.stdout.split('\n').filter((l) => / error TS/.test(l));
    assert.equal(r.status, 0, `tsc (${resolution}) in the user project failed:\n${errors.join('\n')}`);
    // Node's resolution (the "node" condition) gets the Node entry's declarations; a bundler's
    // (Vite's default, no "node" condition) the browser entry's, with worker() and idb.
    const entry = resolution === 'NodeNext' ? 'js' : 'web';
    const re = new RegExp(`Module name 'webtrain' was successfully resolved to '[^']*node_modules/webtrain/${entry}/index\\.d\\.ts'`);
    assert.match(r.stdout, re, `'webtrain' did not resolve to the installed ${entry}/index.d.ts (${resolution})`);
  }
});
