// Training on the webgpu backend (Module.create(..., { backend: 'webgpu' })): golden cases train
// every step to PyTorch's losses, gradients and parameters, evaluate and export as on wasm
// (tests/golden/golden.mjs, as `node tests/golden/run.mjs --backend webgpu` runs it); every op
// without a webgpu kernel is printed (the gap to a complete backend), and a model using one is
// refused naming it, or with 'auto' trains on wasm after a warning. A lost device fails the next
// step saying so, and a checkpoint saved before it resumes on wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create } from 'webgpu';
import { init } from '../../js/core.js';
import { artifacts, CheckpointState, InferenceSession, Module, Optimizer, Tensor, fit } from '../../js/index.js';
import { onnxModel } from './onnx-writer.mjs';
import { runCase, readCase, artifactOptions, setup, inputsOf } from '../golden/golden.mjs';
import { gpu, countCalls } from './webgpu-env.mjs';
import { mlpInputs, mlpLabels, mlpModel } from './mlp.mjs';

const cases = fileURLToPath(new URL('../golden/cases/', import.meta.url));
// Every other golden case trains on webgpu to PyTorch's numbers: `node tests/golden/run.mjs
// --backend webgpu` runs them (scripts/test.sh); here, one, and two of them twice (the same bits).
const ON_GPU = ['mlp_ce_adamw'];

for (const name of ON_GPU) {
  test(`${basename(name)} trains on webgpu to PyTorch's numbers`, async () => {
    const r = await runCase(resolve(cases, name), { backend: 'webgpu', gpu });
    assert.ok(Number.isFinite(r.evalLoss));
  });
}

test('training on webgpu gives the same bits run to run: a CNN with BatchNorm and a LoRA decoder, twice each', async () => {
  for (const name of ['cnn_bn_ce_sgd', 'lora_tiny_llama_adamw']) {
    const [a, b] = [await runCase(join(cases, name), { backend: 'webgpu', gpu }), await runCase(join(cases, name), { backend: 'webgpu', gpu })];
    assert.ok(Object.is(a.evalLoss, b.evalLoss), `${name} eval loss: ${a.evalLoss} vs ${b.evalLoss}`);
    assert.ok(a.params.size > 0);
    for (const [p, v] of a.params) assert.deepEqual(Array.from(b.params.get(p).data), Array.from(v.data), `${name}: ${p}`);
  }
});

test('ops without a webgpu kernel are printed; a model using one is refused naming it, and auto trains it on wasm after one warning', async (t) => {
  // the whole gap: every op webtrain runs that the webgpu backend has no kernel for
  const core = await init();
  const m = core.m;
  const gap = [];
  for (let i = 0; i < m._wtw_registry_count(); i++)
    if (m._wtw_registry_op_webgpu(i) !== 1) gap.push(`${core.string(m._wtw_registry_op_type(i))} (${core.string(m._wtw_registry_op_domain(i)) || 'ai.onnx'})`);
  t.diagnostic(`ops without a webgpu kernel (${gap.length} of ${m._wtw_registry_count()}): ${gap.join(', ')}`);
  assert.ok(gap.length > 0 && gap.length < m._wtw_registry_count() && gap.includes('Sin (ai.onnx)'));
  // y = sin(x W): Sin (and Cos, in its gradient) have no kernel
  const model = onnxModel({
    nodes: [{ op: 'MatMul', inputs: ['x', 'w'], outputs: ['h'] }, { op: 'Sin', inputs: ['h'], outputs: ['y'] }],
    inputs: [{ name: 'x', dims: ['batch', 3] }], initializers: [{ name: 'w', dims: [3, 2], data: Float32Array.from([0.1, -0.2, 0.3, 0.4, -0.5, 0.6]) }],
    outputs: [{ name: 'y', dims: ['batch', 2] }],
  });
  const art = await artifacts.generateArtifacts(model, { loss: 'MSELoss', optimizer: 'SGD', requiresGrad: ['w'] });
  const x = new Tensor('float32', Float32Array.from({ length: 12 }, (_, i) => i / 12), [4, 3]);
  const target = new Tensor('float32', new Float32Array(8).fill(0.25), [4, 2]);
  const losses = {};
  const warnings = [];
  const warn = console.warn;
  console.warn = (w) => warnings.push(w);
  try {
    for (const backend of ['webgpu', 'auto', 'wasm']) {
      const state = await CheckpointState.loadCheckpoint(art.checkpoint);
      const module = await Module.create(art.trainingModel, state, art.evalModel, { backend, gpu });
      const optimizer = await Optimizer.create(art.optimizerModel, module);
      try {
        if (backend === 'webgpu') {
          await assert.rejects(async () => module.run(x, target), /train step: the webgpu backend has no kernel for 2 ops of this model: Sin \(ai\.onnx; node 'sin_1'\), Cos \(ai\.onnx; node /);
          continue;
        }
        losses[backend] = [];
        for (let i = 0; i < 3; i++) {
          losses[backend].push((await module.run(x, target)).data[0]);
          await optimizer.step();
          module.lazyResetGrad();
        }
        assert.equal(module.backend, 'wasm');
      } finally {
        optimizer.release();
        module.release();
        state.release();
      }
    }
  } finally {
    console.warn = warn;
  }
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /backend 'auto' trains this model on wasm: .*Sin/);
  assert.deepEqual(losses.auto, losses.wasm);
});

test('fit on webgpu: the loop awaits each step; its losses are the wasm backend\'s', async () => {
  const art = await artifacts.generateArtifacts(mlpModel, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const x = mlpInputs(64, 3), y = mlpLabels(64);
  const losses = {};
  for (const backend of ['wasm', 'webgpu']) {
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await Module.create(art.trainingModel, state, art.evalModel, { backend, gpu });
    const optimizer = await Optimizer.create(art.optimizerModel, module);
    const { history } = await fit(module, optimizer, { x, y, batchSize: 16, epochs: 2, validation: { x, y }, metrics: ['accuracy'], progress: false });
    losses[backend] = history.map((h) => [h.loss, h.valLoss, h.valAccuracy]);
    optimizer.release();
    module.release();
    state.release();
  }
  losses.webgpu.flat().forEach((v, i) => assert.ok(Math.abs(v - losses.wasm.flat()[i]) <= 1e-5 * (1 + Math.abs(v)), `${v} vs ${losses.wasm.flat()[i]}`));
});

test('training steps after the first create nothing on the device: two submits and one readback each', async () => {
  const { gpuFor } = await import('../../js/core.js');
  const device = (await gpuFor({ backend: 'webgpu', gpu }, 'test')).device;
  const art = await artifacts.generateArtifacts(mlpModel, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel, { backend: 'webgpu', gpu });
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  const step = async (i) => {
    await module.run(mlpInputs(8, i), mlpLabels(8));
    await optimizer.step();
    module.lazyResetGrad();
  };
  await step(0); // builds the program, the optimizer's pipeline and moments
  const creates = ['createBuffer', 'createBindGroup', 'createComputePipeline', 'createComputePipelineAsync', 'createShaderModule'];
  const { counts, restore } = countCalls(device, creates);
  try {
    for (let i = 1; i <= 3; i++) await step(i);
  } finally {
    restore();
    optimizer.release();
    module.release();
    state.release();
  }
  for (const n of creates) assert.equal(counts[n] ?? 0, 0, `${n} after the first step`);
  assert.equal(counts.submit, 6);
  assert.equal(counts.mapAsync, 3);
});

test('the GPU bytes a module holds stay within 1.2x of the wasm backend\'s bytes for the same model; memoryStats reports them', async (t) => {
  const art = await artifacts.generateArtifacts(mlpModel, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const held = {};
  for (const backend of ['wasm', 'webgpu']) {
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await Module.create(art.trainingModel, state, art.evalModel, { backend, gpu });
    const optimizer = await Optimizer.create(art.optimizerModel, module);
    // eval first (a smaller program), then training at two batch sizes: one arena serves all
    await module.eval().run(mlpInputs(8, 0), mlpLabels(8));
    for (const batch of [64, 16]) {
      await module.train().run(mlpInputs(batch, 1), mlpLabels(batch));
      await optimizer.step();
      module.lazyResetGrad();
    }
    await module.eval().run(mlpInputs(64, 2), mlpLabels(64));
    held[backend] = module.memoryStats();
    optimizer.release();
    module.release();
    state.release();
  }
  const cpu = held.wasm, g = held.webgpu.gpu;
  assert.equal(held.wasm.gpu, undefined);
  // the wasm backend's bytes: its arena, the forward values kept for the backward pass, the state
  const bound = cpu.arena + cpu.saved + cpu.params + cpu.grads + cpu.moments + cpu.packed;
  t.diagnostic(`wasm: ${bound} bytes (arena ${cpu.arena}); webgpu: ${JSON.stringify(g)}`);
  assert.equal(g.total, g.params + g.grads + g.moments + g.arena + g.constants + g.other);
  assert.ok(g.params >= cpu.params && g.moments >= cpu.moments && g.arena > 0);
  assert.ok(g.total <= 1.2 * bound, `${g.total} GPU bytes > 1.2 x ${bound}`);
});

test('float16 frozen weights stay float16 on the GPU: a LoRA decoder trains to the wasm backend\'s numbers', async (t) => {
  const dir = join(cases, 'lora_tiny_llama_adamw');
  const c = await readCase(dir);
  const results = {};
  for (const frozenDtype of ['float16', undefined]) {
    const art = await artifacts.generateArtifacts(join(dir, c.model), { ...artifactOptions(c), frozenDtype });
    for (const backend of frozenDtype ? ['wasm', 'webgpu'] : ['webgpu']) {
      const { state, module, optimizer } = await setup(c, art, dir, { backend, gpu });
      const losses = [];
      for (const step of c.steps) {
        const out = await module.run(...(await inputsOf(dir, step.inputs, module.inputNames())));
        losses.push((Array.isArray(out) ? out[0] : out).data[0]);
        await optimizer.step();
        module.lazyResetGrad();
      }
      results[`${backend} ${frozenDtype ?? 'float32'}`] = { losses, gpu: module.memoryStats().gpu, adapter: Array.from((await state.parameters.get('layers.0.q_proj.weight.lora_A')).data) };
      optimizer.release();
      module.release();
      state.release();
    }
  }
  const cpu = results['wasm float16'], g = results['webgpu float16'], full = results['webgpu float32'];
  assert.ok(cpu.adapter.length > 0 && cpu.adapter.length === g.adapter.length);
  t.diagnostic(`losses wasm ${cpu.losses}, webgpu ${g.losses}; GPU parameter bytes ${g.gpu.params} (float32 weights: ${full.gpu.params})`);
  g.losses.forEach((v, i) => assert.ok(Math.abs(v - cpu.losses[i]) <= 1e-6 * Math.abs(cpu.losses[i]), `loss ${i}: ${v} vs ${cpu.losses[i]}`));
  g.adapter.forEach((v, i) => assert.ok(Math.abs(v - cpu.adapter[i]) <= 1e-5 * (1 + Math.abs(cpu.adapter[i])), `lora_A[${i}]: ${v} vs ${cpu.adapter[i]}`));
  assert.ok(g.gpu.params < full.gpu.params, 'the float16 weights take fewer GPU bytes');
});

test('a lost device fails the next step saying so; the checkpoint saved before it resumes on wasm', async () => {
  const own = create([]); // a device of its own, to lose
  const art = await artifacts.generateArtifacts(mlpModel, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel, { backend: 'webgpu', gpu: own });
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  for (let i = 0; i < 2; i++) {
    await module.run(mlpInputs(8, i), mlpLabels(8));
    await optimizer.step();
    module.lazyResetGrad();
  }
  const saved = await CheckpointState.saveCheckpoint(state, null, { includeOptimizerState: true });
  const { gpuFor } = await import('../../js/core.js');
  (await gpuFor({ backend: 'webgpu', gpu: own }, 'test')).device.destroy();
  await new Promise((r) => setTimeout(r, 50));
  await assert.rejects(module.run(mlpInputs(8, 2), mlpLabels(8)), /the WebGPU device was lost .*load one with backend 'wasm'/);
  optimizer.release();
  module.release();
  state.release();
  // on wasm from the checkpoint: the same third step as an uninterrupted wasm run's
  const resumed = await CheckpointState.loadCheckpoint(saved);
  const m2 = await Module.create(art.trainingModel, resumed, art.evalModel, { backend: 'wasm' });
  const o2 = await Optimizer.create(art.optimizerModel, m2);
  const third = m2.run(mlpInputs(8, 2), mlpLabels(8)).data[0];
  const ref = await CheckpointState.loadCheckpoint(art.checkpoint);
  const m3 = await Module.create(art.trainingModel, ref, art.evalModel, { backend: 'wasm' });
  const o3 = await Optimizer.create(art.optimizerModel, m3);
  let refThird;
  for (let i = 0; i < 3; i++) {
    const l = m3.run(mlpInputs(8, i), mlpLabels(8)).data[0];
    if (i === 2) refThird = l;
    else {
      o3.step();
      m3.lazyResetGrad();
    }
  }
  assert.ok(Math.abs(third - refThird) <= 1e-5 * Math.abs(refThird), `${third} vs ${refThird}`);
  for (const o of [o2, m2, resumed, o3, m3, ref]) o.release();
});

test('LoRA exports from a module trained on webgpu: the merged model and the adapter file are the wasm backend\'s', async () => {
  const dir = join(cases, 'lora_tiny_llama_adamw');
  const c = await readCase(dir);
  const art = await artifacts.generateArtifacts(join(dir, c.model), artifactOptions(c));
  const ids = (await inputsOf(dir, c.eval.inputs, ['input_ids']))[0];
  const out = {};
  for (const backend of ['wasm', 'webgpu']) {
    const { state, module, optimizer } = await setup(c, art, dir, { backend, gpu });
    try {
      for (const step of c.steps.slice(0, 3)) {
        await module.run(...(await inputsOf(dir, step.inputs, module.inputNames())));
        await optimizer.step();
        module.lazyResetGrad();
      }
      const merged = await module.exportMergedModel(['logits']);
      const { adapter } = await module.exportLoraAdapter(['logits']);
      const s = await InferenceSession.create(merged, { backend: 'wasm' });
      const logits = Array.from((await s.run({ input_ids: ids })).logits.data);
      s.release();
      // the adapter file's parameters, read into a fresh state
      const fresh = await CheckpointState.loadCheckpoint(art.checkpoint);
      await fresh.loadParameters(adapter);
      const lora = [...fresh.parameters.keys()].filter((n) => /\.lora_[AB]$/.test(n)).flatMap((n) => Array.from(fresh.parameters.get(n).data));
      fresh.release();
      out[backend] = [logits, lora];
    } finally {
      optimizer.release();
      module.release();
      state.release();
    }
  }
  out.wasm.forEach((want, k) => {
    assert.ok(want.length > 0);
    want.forEach((v, i) => assert.ok(Math.abs(out.webgpu[k][i] - v) <= 1e-5 * (1 + Math.abs(v)), `export ${k} logits[${i}]: ${out.webgpu[k][i]} vs ${v}`));
  });
});
