// Steps on the webgpu backend are pipelined: fit submits step n+1 before it reads step n's loss
// (one readback per step, after the next step's submit), and a loop that reads no output reads
// nothing back. The GPU checks each loss itself: a loss that is not finite is skipped, thrown
// or stops fit exactly as on wasm, and a fit that stops after a step takes the step in flight
// back. In every case the losses, parameters and BatchNorm statistics are the wasm backend's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { artifacts, CheckpointState, LinearLRScheduler, Module, Optimizer, Tensor, fit } from '../../js/index.js';
import { gpuFor } from '../../js/core.js';
import { readCase, artifactOptions, inputsOf } from '../golden/golden.mjs';
import { gpu, countCalls } from './webgpu-env.mjs';
import { mlpInputs, mlpLabels, mlpModel } from './mlp.mjs';

const cnn = fileURLToPath(new URL('../golden/cases/cnn_bn_ce_sgd/', import.meta.url));
const CREATES = ['createBuffer', 'createBindGroup', 'createComputePipeline', 'createComputePipelineAsync', 'createShaderModule'];
const TOL = 1e-5;

const made = new Map();
/** The artifacts of 'mlp' (AdamW) or 'cnn' (Conv + BatchNorm, SGD), made once. */
async function artifactsOf(model) {
  if (!made.has(model)) {
    made.set(model, model === 'mlp'
      ? artifacts.generateArtifacts(mlpModel, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' })
      : readCase(cnn).then((c) => artifacts.generateArtifacts(`${cnn}/${c.model}`, artifactOptions(c))));
  }
  return made.get(model);
}

/** A fresh state, module and optimizer of `model` on `backend`, with release(). */
async function objects(model, backend) {
  const art = await artifactsOf(model);
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel, { backend, gpu });
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  return { state, module, optimizer, release: () => [optimizer, module, state].forEach((o) => o.release()) };
}

/** n batches of `model`; the one at index `nan` (if any) has a NaN in its input. */
async function batchesOf(model, n, nan = -1) {
  let batches;
  if (model === 'mlp') {
    batches = Array.from({ length: n }, (_, i) => [mlpInputs(8, i), mlpLabels(8)]);
  } else {
    const c = await readCase(cnn);
    batches = await Promise.all(Array.from({ length: n }, (_, i) => inputsOf(cnn, c.steps[i % c.steps.length].inputs, ['input', 'labels'])));
  }
  if (nan >= 0) {
    const x = batches[nan][0];
    const data = Float32Array.from(x.data);
    data[3] = NaN;
    batches[nan] = [new Tensor('float32', data, x.dims), batches[nan][1]];
  }
  return batches;
}

/** Every parameter of a state, BatchNorm running statistics included: name -> number[]. */
async function paramsOf(state) {
  const out = {};
  for (const name of state.parameters.keys()) out[name] = Array.from((await state.parameters.get(name)).data);
  return out;
}

function assertClose(actual, expected, what) {
  assert.deepEqual(Object.keys(actual), Object.keys(expected), what);
  for (const [name, want] of Object.entries(expected)) {
    const got = actual[name];
    assert.equal(got.length, want.length, `${what}: ${name}`);
    want.forEach((v, i) => assert.ok(Math.abs(got[i] - v) <= TOL * (1 + Math.abs(v)), `${what}: ${name}[${i}] ${got[i]} vs ${v}`));
  }
}

/** `run(objects)` on wasm and on webgpu: { wasm, webgpu } of what it returns, and of the parameters after. */
async function onBoth(model, run) {
  const r = {};
  for (const backend of ['wasm', 'webgpu']) {
    const o = await objects(model, backend);
    try {
      const result = await run(o);
      r[backend] = { result, params: await paramsOf(o.state) };
    } finally {
      o.release();
    }
  }
  assertClose(r.webgpu.params, r.wasm.params, `${model}: webgpu vs wasm`);
  return r;
}

test('fit on webgpu reads step n\'s loss while step n+1 runs: one readback per step, after the next step\'s submit', async () => {
  const device = (await gpuFor({ backend: 'webgpu', gpu }, 'test')).device;
  const batches = await batchesOf('mlp', 5);
  const r = await onBoth('mlp', async ({ module, optimizer }) => {
    const scheduler = new LinearLRScheduler(optimizer, 2, 7, 0.01);
    await fit(module, optimizer, { batches: batches.slice(0, 1), scheduler, progress: false }); // builds the programs
    const gpuCalls = module.backend === 'webgpu' ? countCalls(device, CREATES) : null;
    try {
      const { losses } = await fit(module, optimizer, { batches, scheduler, progress: false });
      return { losses: Array.from(losses), lr: optimizer.getLearningRate(), counts: gpuCalls?.counts, order: gpuCalls?.order };
    } finally {
      gpuCalls?.restore();
    }
  });
  const { counts, order, losses, lr } = r.webgpu.result;
  for (const n of CREATES) assert.equal(counts[n] ?? 0, 0, `${n} after the first step`);
  // a step: its program's submit, then its update's; step k's loss is read after step k+1's submit
  assert.deepEqual(order, ['submit', 'submit', ...Array(4).fill(['submit', 'mapAsync', 'submit']).flat(), 'mapAsync']);
  losses.forEach((v, i) => assert.ok(Math.abs(v - r.wasm.result.losses[i]) <= TOL * (1 + Math.abs(v)), `loss ${i}: ${v} vs ${r.wasm.result.losses[i]}`));
  assert.equal(lr, r.wasm.result.lr);
});

test('a loop that reads no output reads nothing back, and trains as one that reads every loss', async () => {
  const device = (await gpuFor({ backend: 'webgpu', gpu }, 'test')).device;
  const batches = await batchesOf('cnn', 4);
  const r = await onBoth('cnn', async ({ module, optimizer }) => {
    const gpuCalls = module.backend === 'webgpu' ? countCalls(device) : null;
    try {
      for (const batch of batches) {
        module.run(...batch); // not awaited: nothing to read
        await optimizer.step();
        module.lazyResetGrad();
      }
      return gpuCalls?.counts;
    } finally {
      gpuCalls?.restore();
    }
  });
  assert.equal(r.webgpu.result.mapAsync, 0);
  assert.equal(r.webgpu.result.submit, 8);
});

for (const model of ['mlp', 'cnn']) {
  test(`${model}: a batch whose loss is not finite is skipped, thrown or stops fit on webgpu as on wasm`, async () => {
    const batches = await batchesOf(model, 4, 1);
    for (const onNonFinite of ['skip', 'throw', 'stop']) {
      const r = await onBoth(model, async ({ module, optimizer }) => {
        try {
          const f = await fit(module, optimizer, { batches, epochs: 2, onNonFinite, progress: false });
          return { losses: Array.from(f.losses), steps: f.steps, skipped: f.skipped, stopped: f.stopped };
        } catch (e) {
          return { error: e.message };
        }
      });
      const { wasm, webgpu } = r;
      assert.deepEqual(Object.keys(webgpu.result), Object.keys(wasm.result), onNonFinite);
      if (wasm.result.error) assert.equal(webgpu.result.error, wasm.result.error);
      else {
        assert.deepEqual([webgpu.result.steps, webgpu.result.skipped, webgpu.result.stopped], [wasm.result.steps, wasm.result.skipped, wasm.result.stopped], onNonFinite);
        webgpu.result.losses.forEach((v, i) => assert.ok(Math.abs(v - wasm.result.losses[i]) <= TOL * (1 + Math.abs(v)), `${onNonFinite}: loss ${i}`));
      }
    }
  });
}

test('a callback that stops fit on webgpu: the step submitted after it is taken back; training goes on as on wasm', async () => {
  const batches = await batchesOf('cnn', 5);
  const r = await onBoth('cnn', async ({ module, optimizer }) => {
    const first = await fit(module, optimizer, { batches, progress: false, callbacks: { onBatchEnd: (info) => info.step < 2 } });
    const after = await fit(module, optimizer, { batches: batches.slice(2), progress: false });
    return [first.steps, first.stopped, ...first.losses, ...after.losses];
  });
  assert.deepEqual(r.webgpu.result.slice(0, 2), [2, 'callback']);
  r.webgpu.result.slice(2).forEach((v, i) => assert.ok(Math.abs(v - r.wasm.result[2 + i]) <= TOL * (1 + Math.abs(v)), `loss ${i}`));
});

test('a step whose loss is not finite, awaited: its run rejects and the optimizer refuses its gradients, as on wasm', async () => {
  const [bad, good] = await batchesOf('mlp', 2, 0);
  const r = await onBoth('mlp', async ({ module, optimizer }) => {
    const errors = [];
    await (async () => module.run(...bad))().then(() => errors.push('resolved'), (e) => errors.push(e.message));
    await (async () => optimizer.step())().catch((e) => errors.push(e.message));
    await module.run(...good);
    await optimizer.step();
    return errors;
  });
  assert.match(r.wasm.result[0], /^train step: the loss is NaN at this train step/);
  assert.match(r.wasm.result[1], /optimizer step refused: the last train step's loss was not finite/);
  assert.deepEqual(r.webgpu.result, r.wasm.result);
});

test('outputs not read before two later runs of their program are refused, saying so; the later ones read', async () => {
  const o = await objects('mlp', 'webgpu');
  try {
    const [x, y] = (await batchesOf('mlp', 1))[0];
    const runs = [0, 1, 2].map(() => o.module.run(x, y));
    await assert.rejects(runs[0], /not read before later runs of the same program took back their staging buffer; read \(await\) a run's outputs/);
    for (const later of runs.slice(1)) assert.ok(Number.isFinite((await later).data[0]));
  } finally {
    o.release();
  }
});
