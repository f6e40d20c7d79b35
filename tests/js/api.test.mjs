// The training API surface: Module.run inputs and errors, dtype coercion of integer inputs,
// released objects, state.parameters as a Map, contiguous parameter buffers, learning rate and
// LinearLRScheduler, and generateArtifacts options (losses and their reductions/weights checked
// against the formulas on outputs from InferenceSession, custom losses, loss: null, errors, files).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointState, Module, Optimizer, LinearLRScheduler, InferenceSession, Tensor, artifacts, onnxblock, WebtrainError } from '../../js/index.js';
import { coerce } from '../../js/feeds.js';
import { readCase, artifactOptions, inputsOf, loadRef } from '../golden/golden.mjs';

const casesDir = new URL('../golden/cases/', import.meta.url).pathname;
const model = (name) => join(casesDir, name, 'model.onnx');
const MLP = model('mlp_ce_adamw');
const MLP_PARAMS = ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'];

// Deterministic data.
const N = 8;
const x = new Tensor('float32', Float32Array.from({ length: N * 784 }, (_, i) => Math.sin(i * 0.37) * 0.8), [N, 784]);
const labels = new Tensor('int32', Int32Array.from({ length: N }, (_, i) => (i * 3) % 10), [N]);

async function build(modelPath, options) {
  const art = await artifacts.generateArtifacts(modelPath, options);
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = art.optimizerModel ? await Optimizer.create(art.optimizerModel, module) : null;
  return {
    art,
    state,
    module,
    optimizer,
    release() {
      optimizer?.release();
      module.release();
      state.release();
    },
  };
}

/** Forward pass of a forward-only model (its own initializers) with InferenceSession. */
async function forward(modelPath, feeds) {
  const s = await InferenceSession.create(modelPath);
  try {
    return await s.run(feeds);
  } finally {
    s.release();
  }
}

function close(actual, expected, what, rtol = 1e-5, atol = 1e-6) {
  assert.ok(Math.abs(actual - expected) <= atol + rtol * Math.abs(expected), `${what}: ${actual}, expected ${expected}`);
}

function closeAll(actual, expected, what, rtol = 1e-5, atol = 1e-6) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) close(actual[i], expected[i], `${what}[${i}]`, rtol, atol);
}

const sum = (a) => a.reduce((s, v) => s + v, 0);
const mean = (a) => sum(a) / a.length;

/** Per-sample -log_softmax(scores)[n, y[n]] in float64. */
function nll(scores, y, C) {
  return Array.from(y, (yy, n) => {
    const row = Array.from(scores.subarray(n * C, (n + 1) * C));
    const m = Math.max(...row);
    const lse = m + Math.log(sum(row.map((v) => Math.exp(v - m))));
    return lse - row[Number(yy)];
  });
}

const mlp = await build(MLP, { requiresGrad: MLP_PARAMS, loss: artifacts.LossType.CrossEntropyLoss, optimizer: artifacts.OptimType.AdamW });
const mlpOut = (await forward(MLP, { input: x })).output.data;
const expectedCE = mean(nll(mlpOut, labels.data, 10));

test('Module.run: positional and named inputs, onnxruntime-web-like objects, runNamed', () => {
  const { module } = mlp;
  module.train();
  assert.deepEqual(module.inputNames(), ['input', 'labels']);
  assert.deepEqual(module.outputNames(), ['loss']);
  assert.ok(module.isTraining);
  const a = module.run(x, labels);
  assert.ok(a instanceof Tensor);
  assert.deepEqual(a.dims, []);
  close(a.data[0], expectedCE, 'loss vs formula on InferenceSession outputs');
  const b = module.run({ labels, input: x });
  const c = module.run(new Map([['input', x], ['labels', labels]]));
  const d = module.run({ type: 'float32', data: x.data, dims: [N, 784] }, { data: labels.data, dims: [N] });
  const e = module.runNamed(x, labels);
  assert.deepEqual(Object.keys(e), ['loss']);
  for (const t of [b, c, d, e.loss]) assert.equal(t.data[0], a.data[0]);
  module.eval();
  assert.ok(!module.isTraining);
  assert.deepEqual(module.inputNames(), ['input', 'labels']);
  assert.equal(module.run(x, labels).data[0], a.data[0]);
  module.train();
  module.lazyResetGrad();
});

test('Module.run: clear errors naming the input; the module keeps working after them', () => {
  const { module } = mlp;
  module.train();
  assert.throws(() => module.run(x), /the training model takes 2 inputs \(input, labels\); 1 were given/);
  assert.throws(() => module.run(x, labels, labels), /takes 2 inputs .*; 3 were given/);
  assert.throws(() => module.run({ input: x }), /input 'labels' of the training model is missing/);
  assert.throws(() => module.run({ input: x, labels, bogus: x }), /'bogus' is not an input of the training model \(inputs: input, labels\)/);
  assert.throws(() => module.run(new Tensor('float32', new Float32Array(N * 5), [N, 5]), labels), /input 'input' has shape \[8,5\]; expected \[batch,784\]/);
  assert.throws(() => module.run(x, new Tensor('int32', new Int32Array(7), [7])), /input 'labels' has shape \[7\]; expected \[batch\]/);
  assert.throws(() => module.run(x, new Tensor('float32', new Float32Array(N), [N])), /input 'labels' has dtype float.*; expected int32/);
  assert.throws(() => module.run(new Tensor('int32', new Int32Array(N * 784), [N, 784]), labels), /input 'input' has dtype int32; expected float/);
  assert.throws(() => module.run(new Float64Array(4), labels), /input 'input': unsupported data array Float64Array/);
  assert.throws(() => module.run([1, 2, 3], labels), /input 'input': expected a Tensor/);
  assert.throws(() => module.run(null, labels), /input 'input': expected a Tensor.*got null/);
  assert.throws(() => module.run(x, new Tensor('int32', new Int32Array(N).fill(10), [N])), /labels\[0\] = 10 is out of range; expected 0 <= label < 10/);
  module.eval();
  assert.throws(() => module.run(x), /the eval model takes 2 inputs/);
  module.train();
  module.lazyResetGrad();
  close(module.run(x, labels).data[0], expectedCE, 'loss after errors');
  module.lazyResetGrad();
});

test('integer inputs: int64 labels for an int32 input, int32 ids for an int64 input', async () => {
  const { module } = mlp;
  const m = module.core.m;
  // _wtw_module_input_dtype(module, eval, i) gives the declared ONNX dtype code.
  assert.equal(m._wtw_module_input_dtype(module.h, 0, 0), 1);
  assert.equal(m._wtw_module_input_dtype(module.h, 0, 1), 6);
  assert.equal(m._wtw_module_input_dtype(module.h, 1, 1), 6);
  module.eval();
  const l64 = new Tensor('int64', BigInt64Array.from(labels.data, BigInt), [N]);
  assert.equal(module.run(x, l64).data[0], module.run(x, labels).data[0]);
  assert.throws(() => module.run(x, new Tensor('int64', new BigInt64Array(N).fill(1n << 40n), [N])), /input 'labels': value 1099511627776 at index 0 does not fit the int32 input/);
  module.train();

  const dir = join(casesDir, 'tiny_transformer_frozen_adamw');
  const c = await readCase(dir);
  const t = await build(model('tiny_transformer_frozen_adamw'), artifactOptions(c));
  try {
    assert.equal(t.module.core.m._wtw_module_input_dtype(t.module.h, 1, 0), 7);
    t.module.eval();
    const [ids, lab] = await inputsOf(dir, c.eval.inputs, t.module.inputNames());
    assert.equal(ids.type, 'int64');
    const ids32 = new Tensor('int32', Int32Array.from(ids.data, Number), ids.dims);
    const a = t.module.run(ids, lab).data[0];
    assert.equal(t.module.run(ids32, lab).data[0], a);
    assert.ok(Number.isFinite(a) && a > 0);
  } finally {
    t.release();
  }
  // coerce: only integer conversions; everything else is left for the core to check
  const f = new Tensor('float32', new Float32Array(2), [2]);
  assert.equal(coerce(f, 6), f);
  assert.equal(coerce(f, 999), f);
  assert.deepEqual(Array.from(coerce(new Tensor('int32', new Int32Array([-1, 7]), [2]), 7).data), [-1n, 7n]);
});

test('released objects throw a clear error; the state outlives them safely', async () => {
  const t = await build(MLP, { requiresGrad: MLP_PARAMS, loss: 'CrossEntropyLoss', optimizer: 'SGD' });
  // Releasing the state first: the module and optimizer keep working; the memory goes with them.
  t.state.release();
  assert.throws(() => t.state.parameters.size, /the checkpoint state was released/);
  assert.throws(() => t.state.parameters.get('fc1.bias'), /the checkpoint state was released/);
  assert.throws(() => [...t.state.properties], /the checkpoint state was released/);
  assert.throws(() => t.state.toBytes(), /the checkpoint state was released/);
  await assert.rejects(CheckpointState.saveCheckpoint(t.state, null), /the checkpoint state was released/);
  await assert.rejects(Module.create(t.art.trainingModel, t.state, t.art.evalModel), /the checkpoint state was released/);
  close(t.module.run(x, labels).data[0], expectedCE, 'loss after state.release()');
  t.optimizer.step();
  assert.equal(t.module.getParametersSize(), 101770);
  t.module.release();
  assert.throws(() => t.module.run(x, labels), /the module was released/);
  assert.throws(() => t.module.inputNames(), /the module was released/);
  assert.throws(() => t.module.getParametersSize(), /the module was released/);
  assert.throws(() => t.module.getContiguousParameters(), /the module was released/);
  assert.throws(() => t.module.lazyResetGrad(), /the module was released/);
  await assert.rejects(t.module.exportModelForInferencing(['output']), /the module was released/);
  await assert.rejects(Optimizer.create(t.art.optimizerModel, t.module), /the module was released/);
  // the state is alive still, but a step would update parameters no module can run
  assert.throws(() => t.optimizer.step(), /optimizer step: its module was released/);
  t.optimizer.release();
  assert.throws(() => t.optimizer.step(), /the optimizer was released/);
  assert.throws(() => t.optimizer.getLearningRate(), /the optimizer was released/);
  assert.throws(() => t.optimizer.setLearningRate(0.1), /the optimizer was released/);
  assert.throws(() => new LinearLRScheduler(t.optimizer, 1, 2, 0.1), /the optimizer was released/);
  // releasing twice is harmless
  t.optimizer.release();
  t.module.release();
  t.state.release();
  // and the core is fine afterwards
  const s = await CheckpointState.loadCheckpoint(t.art.checkpoint);
  assert.equal(s.parameters.size, 4);
  s.release();
});

test('state.parameters behaves like a Map', async () => {
  const dir = join(casesDir, 'two_output_custom_loss');
  const c = await readCase(dir);
  const t = await build(model('two_output_custom_loss'), artifactOptions(c));
  try {
    const p = t.state.parameters;
    assert.equal(p.size, 6);
    assert.deepEqual([...p.keys()].sort(), [...c.requires_grad, ...c.frozen_params].sort());
    assert.ok(p.has('trunk.weight') && !p.has('nope'));
    assert.equal(p.get('nope'), undefined);
    const w = p.get('head2.weight');
    assert.equal(w.name, 'head2.weight');
    assert.deepEqual(w.dims, [2, 16]);
    assert.ok(w.requiresGrad);
    assert.ok(w.data instanceof Float32Array && w.data.length === 32);
    assert.ok(w.grad instanceof Float32Array && w.grad.length === 32);
    const initial = await loadRef(dir, c.initial_params['head2.weight']);
    assert.deepEqual(Array.from(w.data), Array.from(initial.data));
    const frozen = p.get('trunk.weight');
    assert.equal(frozen.requiresGrad, false);
    assert.equal(frozen.grad, null);
    // iteration: entries, keys, values, for..of
    const entries = [...p];
    assert.equal(entries.length, 6);
    for (const [name, v] of entries) assert.equal(v.name, name);
    assert.deepEqual([...p.values()].map((v) => v.name), [...p.keys()]);
    assert.deepEqual([...p.entries()].map(([k]) => k), [...p.keys()]);
    // data is a copy, set writes through
    w.data[0] = 1234;
    assert.notEqual(p.get('head2.weight').data[0], 1234);
    const fresh = Float32Array.from({ length: 32 }, (_, i) => i / 32);
    p.set('head2.weight', fresh);
    assert.deepEqual(Array.from(p.get('head2.weight').data), Array.from(fresh));
    p.set('head1.bias', [0.5]); // a plain array works too
    assert.equal(p.get('head1.bias').data[0], 0.5);
    p.set('trunk.bias', new Float32Array(16).fill(0.25)); // frozen parameters can be set
    assert.equal(p.get('trunk.bias').data[3], 0.25);
    assert.throws(() => p.set('head2.weight', new Float32Array(31)), /parameter 'head2.weight' holds 32 float values; 31 were given/);
    assert.throws(() => p.set('nope', new Float32Array(1)), /no parameter named 'nope'/);
    // the new values are what the model computes with: out2 = relu(trunk) · head2ᵀ + b2
    const [input] = await inputsOf(dir, c.eval.inputs, ['input']);
    const exported = await t.module.exportModelForInferencing(['out1', 'out2']);
    const got = await forward(exported, { input });
    const tw = p.get('trunk.weight').data;
    const tb = p.get('trunk.bias').data;
    const b2 = p.get('head2.bias').data;
    for (let n = 0; n < 2; n++) {
      const h = Array.from({ length: 16 }, (_, j) => Math.max(0, tb[j] + sum(Array.from({ length: 10 }, (_, k) => input.data[n * 10 + k] * tw[j * 10 + k]))));
      for (let o = 0; o < 2; o++) close(got.out2.data[n * 2 + o], b2[o] + sum(h.map((v, j) => v * fresh[o * 16 + j])), `out2[${n},${o}]`, 1e-5, 1e-5);
    }
  } finally {
    t.release();
  }
});

test('getParametersSize / getContiguousParameters / copyBufferToParameters round trip', async () => {
  const c = await readCase(join(casesDir, 'two_output_custom_loss'));
  const t = await build(model('two_output_custom_loss'), artifactOptions(c));
  try {
    const { module, state } = t;
    assert.equal(module.getParametersSize(), 16 + 1 + 32 + 2);
    assert.equal(module.getParametersSize(true), 51);
    assert.equal(module.getParametersSize(false), 51 + 160 + 16);
    for (const trainableOnly of [true, false]) {
      const buf = module.getContiguousParameters(trainableOnly);
      assert.ok(buf instanceof Tensor);
      assert.deepEqual(buf.dims, [module.getParametersSize(trainableOnly)]);
      // the layout: the parameters in state.parameters order (trainable ones only if asked)
      const parts = [...state.parameters.values()].filter((p) => !trainableOnly || p.requiresGrad).map((p) => Array.from(p.data));
      assert.deepEqual(Array.from(buf.data), parts.flat());
      const scaled = buf.data.map((v, i) => v * 2 + i);
      module.copyBufferToParameters(scaled, trainableOnly);
      assert.deepEqual(Array.from(module.getContiguousParameters(trainableOnly).data), Array.from(scaled));
      module.copyBufferToParameters(buf, trainableOnly); // a Tensor works too
      assert.deepEqual(Array.from(module.getContiguousParameters(trainableOnly).data), Array.from(buf.data));
    }
    assert.throws(() => module.copyBufferToParameters(new Float32Array(50)), /the parameter buffer holds 50 floats; the trainable parameters need 51/);
    assert.throws(() => module.copyBufferToParameters([1, 2]), /expected a Float32Array or a float32 Tensor/);
  } finally {
    t.release();
  }
});

test('learning rate: set/get, validation, lr 0 leaves parameters, LinearLRScheduler values', async () => {
  const t = await build(MLP, { requiresGrad: MLP_PARAMS, loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  try {
    const { module, optimizer, state } = t;
    close(optimizer.getLearningRate(), 1e-3, 'default learning rate (ONNX Runtime: 0.001)', 1e-6, 0);
    optimizer.setLearningRate(0.125);
    assert.equal(optimizer.getLearningRate(), 0.125);
    assert.throws(() => optimizer.setLearningRate(-1), /learning rate -1: expected a finite number >= 0/);
    assert.throws(() => optimizer.setLearningRate(NaN), /learning rate NaN: expected a finite number >= 0/);
    assert.throws(() => optimizer.setLearningRate(Infinity), /learning rate Infinity/);
    assert.throws(() => optimizer.setLearningRate('0.1'), /learning rate 0.1: expected a finite number/);
    assert.equal(optimizer.getLearningRate(), 0.125);
    optimizer.setLearningRate(0);
    const before = module.getContiguousParameters().data;
    module.run(x, labels);
    optimizer.step();
    module.lazyResetGrad();
    assert.deepEqual(module.getContiguousParameters().data, before);
    assert.notDeepEqual(state.parameters.get('fc2.bias').grad, new Float32Array(10)); // gradients were there

    // factor(s) = s / warmup for s < warmup, else max(0, (total - s) / (total - warmup)), s being
    // the optimizer's step count (as in ONNX Runtime): one optimizer step was taken above.
    const lrAt = (s, warmup, total, lr0) => lr0 * (s < warmup ? s / warmup : total > warmup ? Math.max(0, (total - s) / (total - warmup)) : 0);
    let steps = 1;
    for (const [warmup, total, lr0] of [[2, 6, 0.01], [0, 4, 0.1], [3, 3, 0.5], [1, 10, 1e-3]]) {
      const end = total + steps; // the schedule counts from step 0: it runs `total` steps from here
      const sch = new LinearLRScheduler(optimizer, warmup, end, lr0);
      for (let s = 0; s <= total + 2; s++) {
        close(optimizer.getLearningRate(), lrAt(steps, warmup, end, lr0), `lr after ${steps} optimizer steps (warmup ${warmup}, total ${end})`, 1e-6, 1e-9);
        module.run(x, labels); // (a step applies the gradients of a run)
        optimizer.step();
        steps++;
        sch.step();
      }
      // a scheduler step without an optimizer step leaves the rate (the step count did not move)
      const lr = optimizer.getLearningRate();
      sch.step();
      assert.equal(optimizer.getLearningRate(), lr);
    }
    // without initialLr: the optimizer's current rate
    optimizer.setLearningRate(0.02);
    const sch = new LinearLRScheduler(optimizer, 0, steps + 2);
    close(optimizer.getLearningRate(), lrAt(steps, 0, steps + 2, 0.02), 'initial rate 0.02, 2 steps before the end', 1e-6, 0);
    module.run(x, labels);
    optimizer.step();
    sch.step();
    close(optimizer.getLearningRate(), lrAt(steps + 1, 0, steps + 2, 0.02), 'initial rate 0.02, 1 step before the end', 1e-6, 0);
    assert.throws(() => new LinearLRScheduler(optimizer, -1, 5, 0.1), /LinearLRScheduler: warmupStepCount/);
    assert.throws(() => new LinearLRScheduler(optimizer, 1, 0, 0.1), /LinearLRScheduler: totalStepCount/);
    assert.throws(() => new LinearLRScheduler(optimizer, 1, 5, -0.1), /LinearLRScheduler: initialLr/);
    assert.throws(() => new LinearLRScheduler(module, 1, 5, 0.1), /the first argument must be an Optimizer/);
  } finally {
    t.release();
  }
});

// optimizer.lr is recorded as the checkpoint's initial learning rate (an optimizer group at step 0).
test('generateArtifacts: optimizer.lr is the initial learning rate', async () => {
  const t = await build(MLP, { requiresGrad: MLP_PARAMS, loss: 'CrossEntropyLoss', optimizer: { type: 'AdamW', lr: 0.002 } });
  try {
    close(t.optimizer.getLearningRate(), 0.002, 'lr from the optimizer options', 1e-6, 0);
  } finally {
    t.release();
  }
});

test('generateArtifacts: errors name what is wrong', async () => {
  const gen = (o) => artifacts.generateArtifacts(MLP, { loss: 'CrossEntropyLoss', ...o });
  await assert.rejects(gen({ requiresGrad: ['fc1.weight'], frozenParams: ['fc1.weight'] }), /'fc1.weight' is listed in both requires_grad and frozen_params/);
  await assert.rejects(gen({ requiresGrad: ['fc9.weight'] }), /requires_grad: 'fc9.weight' is not an initializer \(parameter\) of the model/);
  await assert.rejects(gen({ requiresGrad: ['fc1.weight'], frozenParams: ['nope'] }), /frozen_params: 'nope' is not an initializer/);
  await assert.rejects(gen({ requiresGrad: MLP_PARAMS, additionalOutputNames: ['nope'] }), /additional_output_names: 'nope' is not a value of the model/);
  await assert.rejects(gen({ requiresGrad: MLP_PARAMS, lossInputNames: ['nope'] }), /loss_input_names: 'nope' is not a value of the model/);
  await assert.rejects(gen({ requiresGrad: MLP_PARAMS, loss: 'HingeLoss' }), /unknown loss 'HingeLoss'; expected one of MSELoss, CrossEntropyLoss, BCEWithLogitsLoss, L1Loss or an onnxblock.Block/);
  await assert.rejects(gen({ requiresGrad: MLP_PARAMS, loss: { type: 'CrossEntropyLoss', reduction: 'avg' } }), /loss reduction 'avg': expected mean, sum or none/);
  await assert.rejects(gen({ requiresGrad: MLP_PARAMS, optimizer: 'Adam' }), /unknown optimizer 'Adam'; expected AdamW or SGD/);
  await assert.rejects(gen({ requiresGrad: MLP_PARAMS, ortFormat: true }), /ort_format: webtrain writes ONNX artifacts only/);
  await assert.rejects(gen({ requiresGrad: MLP_PARAMS, customOpLibrary: 'libcustom.so' }), /custom_op_library: custom op libraries are not supported/);
  await assert.rejects(artifacts.generateArtifacts(new Uint8Array([1, 2, 3]), { requiresGrad: ['w'] }), /not a valid ONNX model/);
  await assert.rejects(artifacts.generateArtifacts('/nonexistent/model.onnx', {}), /nonexistent\/model\.onnx/);
  // a custom loss whose build throws: the error comes through, and the next build works
  class Broken extends onnxblock.Block {
    build() {
      throw new Error('broken loss');
    }
  }
  await assert.rejects(gen({ requiresGrad: MLP_PARAMS, loss: new Broken() }), /broken loss/);
  class NotAName extends onnxblock.Block {
    build(out) {
      return this.missing ?? 'no_such_value';
    }
  }
  await assert.rejects(gen({ requiresGrad: MLP_PARAMS, loss: new NotAName() }), /no_such_value/);
  class BadOp extends onnxblock.Block {
    build(out) {
      return new onnxblock.blocks.Add()(out, 42);
    }
  }
  await assert.rejects(gen({ requiresGrad: MLP_PARAMS, loss: new BadOp() }), /onnxblock Add: inputs are value names \(strings\); got number/);
  const ok = await gen({ requiresGrad: MLP_PARAMS });
  assert.ok(ok.trainingModel && ok.evalModel && ok.checkpoint);
  assert.equal(ok.optimizerModel, undefined, 'no optimizer: no optimizer model (ONNX Runtime: optimizer=None)');
});

test('additionalOutputNames: the train and eval steps also return those outputs', async () => {
  const t = await build(MLP, { requiresGrad: MLP_PARAMS, loss: 'CrossEntropyLoss', additionalOutputNames: ['output'] });
  try {
    assert.deepEqual(t.module.outputNames(), ['loss', 'output']);
    const [loss, output] = t.module.run(x, labels);
    close(loss.data[0], expectedCE, 'loss');
    assert.deepEqual(output.dims, [N, 10]);
    closeAll(output.data, mlpOut, 'output', 1e-5, 1e-6);
    t.module.eval();
    assert.deepEqual(t.module.outputNames(), ['loss', 'output']);
    assert.deepEqual(Object.keys(t.module.runNamed(x, labels)), ['loss', 'output']);
  } finally {
    t.release();
  }
});

const REG = model('regression_mse_adamw');
const REG_PARAMS = ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias', 'fc3.weight', 'fc3.bias'];
const xr = new Tensor('float32', Float32Array.from({ length: N * 16 }, (_, i) => Math.cos(i * 0.7)), [N, 16]);
const target = new Tensor('float32', Float32Array.from({ length: N * 3 }, (_, i) => Math.sin(i * 1.3) * 0.5), [N, 3]);
const regOut = (await forward(REG, { input: xr })).output.data;

test('built-in losses with reductions mean, sum and none match their formulas', async () => {
  const d = Array.from(regOut, (o, i) => o - target.data[i]);
  const se = d.map((v) => v * v);
  const ae = d.map(Math.abs);
  for (const [loss, perElem] of [['MSELoss', se], ['L1Loss', ae]]) {
    for (const [reduction, expected] of [['mean', [mean(perElem)]], ['sum', [sum(perElem)]], ['none', perElem]]) {
      const t = await build(REG, { requiresGrad: REG_PARAMS, loss: { type: loss, reduction } });
      try {
        const l = t.module.run(xr, target);
        assert.deepEqual(l.dims, reduction === 'none' ? [N, 3] : [], `${loss} ${reduction} dims`);
        closeAll(l.data, expected, `${loss} ${reduction}`);
      } finally {
        t.release();
      }
    }
  }
  const per = nll(mlpOut, labels.data, 10);
  for (const [reduction, expected] of [['sum', [sum(per)]], ['none', per]]) {
    const t = await build(MLP, { requiresGrad: MLP_PARAMS, loss: { type: 'CrossEntropyLoss', reduction } });
    try {
      const l = t.module.run(x, labels);
      assert.deepEqual(l.dims, reduction === 'none' ? [N] : []);
      closeAll(l.data, expected, `CrossEntropyLoss ${reduction}`);
    } finally {
      t.release();
    }
  }
});

test('CrossEntropyLoss ignoreIndex and weight', async () => {
  const per = nll(mlpOut, labels.data, 10);
  const w = Float32Array.from({ length: 10 }, (_, i) => 0.5 + i / 10);
  const ignore = labels.data[2]; // ignores every sample with that label
  const keep = Array.from(labels.data, (y) => y !== ignore);
  const cases = [
    [{ ignoreIndex: ignore }, sum(per.filter((_, n) => keep[n])) / keep.filter(Boolean).length],
    [{ weight: w }, sum(per.map((v, n) => v * w[labels.data[n]])) / sum(Array.from(labels.data, (y) => w[y]))],
    [{ weight: w, ignoreIndex: ignore }, sum(per.map((v, n) => (keep[n] ? v * w[labels.data[n]] : 0))) / sum(Array.from(labels.data, (y, n) => (keep[n] ? w[y] : 0)))],
    [{ weight: w, reduction: 'sum' }, sum(per.map((v, n) => v * w[labels.data[n]]))],
  ];
  for (const [opts, expected] of cases) {
    const t = await build(MLP, { requiresGrad: MLP_PARAMS, loss: { type: 'CrossEntropyLoss', ...opts } });
    try {
      close(t.module.run(x, labels).data[0], expected, `CrossEntropyLoss ${JSON.stringify({ ...opts, weight: opts.weight && 'w' })}`);
      // ignored labels may lie outside [0, C)
      if (opts.ignoreIndex !== undefined && !opts.weight) {
        const t2 = await build(MLP, { requiresGrad: MLP_PARAMS, loss: { type: 'CrossEntropyLoss', ignoreIndex: -100 } });
        const lab = Int32Array.from(labels.data, (y, n) => (keep[n] ? y : -100));
        close(t2.module.run(x, new Tensor('int32', lab, [N])).data[0], expected, 'ignoreIndex -100');
        t2.release();
      }
    } finally {
      t.release();
    }
  }
  await assert.rejects(
    artifacts.generateArtifacts(MLP, { requiresGrad: MLP_PARAMS, loss: { type: 'CrossEntropyLoss', weight: new Float32Array(3) } }),
    /SoftmaxCrossEntropyLoss node .*: input 'weights' is float \[3\]; expected float \[10\]/,
  );
});

const BCE = model('multilabel_bce');
const BCE_PARAMS = ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'];

test('BCEWithLogitsLoss weight and posWeight match the formula; logits of ±100 stay finite', async () => {
  const xb = new Tensor('float32', Float32Array.from({ length: N * 20 }, (_, i) => Math.sin(i * 0.91) * 2), [N, 20]);
  const tb = new Tensor('float32', Float32Array.from({ length: N * 5 }, (_, i) => ((i * 7) % 3 === 0 ? 1 : 0)), [N, 5]);
  const w = [0.5, 1, 1.5, 2, 0.25];
  const pw = [3, 1, 0.5, 2, 1.25];
  // -w·[pw·t·log σ(x) + (1-t)·log(1-σ(x))], with log σ(x) = -softplus(-x), log(1-σ(x)) = -softplus(x)
  const softplus = (v) => Math.max(v, 0) + Math.log1p(Math.exp(-Math.abs(v)));
  const bce = (logits, opts) =>
    Array.from(logits, (v, i) => {
      const c = i % 5;
      const t = tb.data[i];
      return (opts.weight ? w[c] : 1) * ((opts.posWeight ? pw[c] : 1) * t * softplus(-v) + (1 - t) * softplus(v));
    });
  const out = (await forward(BCE, { input: xb })).output.data;
  for (const opts of [{}, { weight: w }, { posWeight: pw }, { weight: w, posWeight: pw }, { posWeight: pw, reduction: 'sum' }, { weight: w, reduction: 'none' }]) {
    const t = await build(BCE, { requiresGrad: BCE_PARAMS, loss: { type: 'BCEWithLogitsLoss', ...opts }, additionalOutputNames: ['output'] });
    try {
      const per = bce(out, opts);
      const expected = opts.reduction === 'sum' ? [sum(per)] : opts.reduction === 'none' ? per : [mean(per)];
      closeAll(t.module.run(xb, tb)[0].data, expected, `BCEWithLogitsLoss ${JSON.stringify(opts)}`);
      // huge logits: fc2 zeroed, bias ±100
      const p = t.state.parameters;
      p.set('fc2.weight', new Float32Array(5 * 24));
      const big = Float32Array.from([100, -100, 100, -100, 0]);
      p.set('fc2.bias', big);
      const [loss, logits] = t.module.run(xb, tb);
      assert.deepEqual(Array.from(logits.data.slice(0, 5)), Array.from(big));
      const perBig = bce(logits.data, opts);
      const expBig = opts.reduction === 'sum' ? [sum(perBig)] : opts.reduction === 'none' ? perBig : [mean(perBig)];
      assert.ok(Array.from(loss.data).every(Number.isFinite), `finite loss for ±100 logits: ${loss.data}`);
      closeAll(loss.data, expBig, `BCEWithLogitsLoss ${JSON.stringify(opts)} at ±100`);
      // and finite gradients
      for (const n of BCE_PARAMS) assert.ok(p.get(n).grad.every(Number.isFinite), `finite grad ${n}`);
    } finally {
      t.release();
    }
  }
});

test('lossInputNames: a built-in loss on a chosen output; custom onnxblock losses', async () => {
  const dir = join(casesDir, 'two_output_custom_loss');
  const c = await readCase(dir);
  const TWO = model('two_output_custom_loss');
  const [input] = await inputsOf(dir, c.eval.inputs, ['input']);
  const outs = await forward(TWO, { input });
  const n = c.batch_size;
  const t2 = new Tensor('float32', Float32Array.from({ length: n * 2 }, (_, i) => i / 7), [n, 2]);
  const t1 = new Tensor('float32', Float32Array.from({ length: n }, (_, i) => 1 - i / 5), [n, 1]);
  {
    // head1 does not reach out2: listing it in requiresGrad is an error, frozen it is fine
    await assert.rejects(
      artifacts.generateArtifacts(TWO, { requiresGrad: c.requires_grad, frozenParams: c.frozen_params, loss: 'MSELoss', lossInputNames: ['out2'] }),
      /the loss does not depend on parameter 'head1.weight' \(list it in frozen_params instead of requires_grad\)/,
    );
    const t = await build(TWO, { requiresGrad: ['head2.weight', 'head2.bias'], frozenParams: [...c.frozen_params, 'head1.weight', 'head1.bias'], loss: 'MSELoss', lossInputNames: ['out2'] });
    try {
      assert.deepEqual(t.module.inputNames(), ['input', 'target']);
      close(t.module.run(input, t2).data[0], mean(Array.from(outs.out2.data, (o, i) => (o - t2.data[i]) ** 2)), 'MSE on out2');
      assert.throws(() => t.module.run(input, t1), /input 'target' has shape \[8,1\]; expected \[batch,2\]/);
    } finally {
      t.release();
    }
  }
  // An onnxblock loss built from elementary blocks: mean|out1 - target1| + 0.5·sum(out2²)
  class Mixed extends onnxblock.Block {
    constructor() {
      super();
      this.l1 = new onnxblock.loss.L1Loss();
      this.sq = new onnxblock.blocks.Pow(2);
      this.sum = new onnxblock.blocks.ReduceSum();
      this.half = new onnxblock.blocks.Constant(0.5);
      this.mul = new onnxblock.blocks.Mul();
      this.add = new onnxblock.blocks.Add();
    }
    build(o1, o2) {
      return this.add(this.l1(o1, 'target1'), this.mul(this.half(), this.sum(this.sq(o2))));
    }
  }
  const t = await build(TWO, { requiresGrad: c.requires_grad, frozenParams: c.frozen_params, loss: new Mixed(), optimizer: 'SGD' });
  try {
    assert.deepEqual(t.module.inputNames(), ['input', 'target1']);
    const expected = mean(Array.from(outs.out1.data, (o, i) => Math.abs(o - t1.data[i]))) + 0.5 * sum(Array.from(outs.out2.data, (o) => o * o));
    close(t.module.run(input, t1).data[0], expected, 'custom onnxblock loss');
  } finally {
    t.release();
  }
});

test('loss: null — the model output is the loss', async () => {
  // A forward-only model whose output is a scalar loss: the eval graph of CE artifacts, exported.
  const lossModel = await mlp.module.exportModelForInferencing(['loss']);
  const t = await build(lossModel, { requiresGrad: MLP_PARAMS, loss: null, optimizer: 'SGD' });
  try {
    assert.deepEqual(t.module.inputNames(), ['input', 'labels']);
    assert.deepEqual(t.module.outputNames(), ['loss']);
    t.optimizer.setLearningRate(0.1);
    const mlpNow = await mlp.module.exportModelForInferencing(['output']);
    const outNow = (await forward(mlpNow, { input: x })).output.data;
    const l0 = t.module.run(x, labels).data[0];
    close(l0, mean(nll(outNow, labels.data, 10)), 'loss: null gives the model output');
    t.optimizer.step();
    t.module.lazyResetGrad();
    assert.ok(t.module.run(x, labels).data[0] < l0, 'training on the model output lowers it');
  } finally {
    t.release();
  }
  // loss: null with a loss-only option is a contradiction
  await assert.rejects(artifacts.generateArtifacts(lossModel, { requiresGrad: MLP_PARAMS, loss: null, lossInputNames: ['loss'] }), /lossInputNames name the inputs of the loss, but loss is null/);
  // the output must depend on what is trained
  await assert.rejects(artifacts.generateArtifacts(lossModel, { requiresGrad: ['fc9.weight'], loss: null }), /'fc9.weight' is not an initializer/);
});

test('nominalCheckpoint: shapes and names without the values', async () => {
  const art = await artifacts.generateArtifacts(MLP, { requiresGrad: MLP_PARAMS, loss: 'CrossEntropyLoss', optimizer: 'AdamW', nominalCheckpoint: true });
  assert.ok(art.nominalCheckpoint instanceof Uint8Array);
  assert.ok(art.nominalCheckpoint.byteLength < art.checkpoint.byteLength / 10, `nominal ${art.nominalCheckpoint.byteLength} bytes vs ${art.checkpoint.byteLength}`);
  // webtrain refuses to train from placeholders, and says so
  await assert.rejects(CheckpointState.loadCheckpoint(art.nominalCheckpoint), /checkpoint parameter '[^']+' has no data \(a nominal checkpoint cannot be trained from\)/);
  // the regular checkpoint is the same as without the option
  const plain = await artifacts.generateArtifacts(MLP, { requiresGrad: MLP_PARAMS, loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  assert.ok(Buffer.from(plain.checkpoint).equals(Buffer.from(art.checkpoint)));
  assert.equal(plain.nominalCheckpoint, undefined);
});

test("artifactDirectory + prefix write ONNX Runtime's file names", async () => {
  const d = await mkdtemp(join(tmpdir(), 'webtrain-art-'));
  try {
    const out = join(d, 'new', 'sub'); // created if missing
    const art = await artifacts.generateArtifacts(MLP, { requiresGrad: MLP_PARAMS, loss: 'CrossEntropyLoss', optimizer: 'AdamW', artifactDirectory: out, prefix: 'mnist_', nominalCheckpoint: true });
    const files = (await readdir(out)).sort();
    assert.deepEqual(files, ['mnist_checkpoint', 'mnist_eval_model.onnx', 'mnist_nominal_checkpoint', 'mnist_optimizer_model.onnx', 'mnist_training_model.onnx']);
    for (const [k, f] of [['trainingModel', 'training_model.onnx'], ['evalModel', 'eval_model.onnx'], ['optimizerModel', 'optimizer_model.onnx'], ['checkpoint', 'checkpoint'], ['nominalCheckpoint', 'nominal_checkpoint']])
      assert.ok(Buffer.from(await readFile(join(out, `mnist_${f}`))).equals(Buffer.from(art[k])), f);
    // the files work as paths
    const state = await CheckpointState.loadCheckpoint(join(out, 'mnist_checkpoint'));
    const module = await Module.create(join(out, 'mnist_training_model.onnx'), state, join(out, 'mnist_eval_model.onnx'));
    const optimizer = await Optimizer.create(join(out, 'mnist_optimizer_model.onnx'), module);
    close(module.run(x, labels).data[0], expectedCE, 'loss from the written artifacts');
    optimizer.release();
    module.release();
    state.release();
    // no prefix, no optimizer: ONNX Runtime's plain names, no optimizer file
    const plain = join(d, 'plain');
    await artifacts.generateArtifacts(MLP, { requiresGrad: MLP_PARAMS, loss: 'CrossEntropyLoss', artifactDirectory: plain });
    assert.deepEqual((await readdir(plain)).sort(), ['checkpoint', 'eval_model.onnx', 'training_model.onnx']);
  } finally {
    await rm(d, { recursive: true, force: true });
  }
});

test('errors are WebtrainErrors (Error subclasses)', () => {
  try {
    mlp.module.run(x);
    assert.fail('no error');
  } catch (err) {
    assert.ok(err instanceof WebtrainError && err instanceof Error);
    assert.equal(err.name, 'WebtrainError');
  }
});

test('onnxblock loss blocks give the built-in losses (same options, same values)', async () => {
  const xb = new Tensor('float32', Float32Array.from({ length: N * 20 }, (_, i) => Math.sin(i * 0.53) * 3), [N, 20]);
  const tb = new Tensor('float32', Float32Array.from({ length: N * 5 }, (_, i) => (i % 3 === 1 ? 1 : 0)), [N, 5]);
  const w10 = Array.from({ length: 10 }, (_, i) => 1 + (i % 4) / 3);
  const cases = [
    [MLP, MLP_PARAMS, [x, labels], 'CrossEntropyLoss', {}],
    [MLP, MLP_PARAMS, [x, labels], 'CrossEntropyLoss', { weight: w10, ignoreIndex: labels.data[1], reduction: 'mean' }],
    [MLP, MLP_PARAMS, [x, labels], 'CrossEntropyLoss', { reduction: 'sum' }],
    [REG, REG_PARAMS, [xr, target], 'MSELoss', { reduction: 'sum' }],
    [REG, REG_PARAMS, [xr, target], 'L1Loss', {}],
    [BCE, BCE_PARAMS, [xb, tb], 'BCEWithLogitsLoss', { weight: [1, 2, 3, 4, 5], posWeight: [0.5, 1, 2, 4, 8] }],
    [BCE, BCE_PARAMS, [xb, tb], 'BCEWithLogitsLoss', { reduction: 'none' }],
  ];
  for (const [m, params, inputs, type, opts] of cases) {
    const builtin = await build(m, { requiresGrad: params, loss: { type, ...opts } });
    const Cls = onnxblock.loss[type];
    const block = type === 'MSELoss' || type === 'L1Loss' ? new Cls(opts.reduction) : new Cls(opts);
    const custom = await build(m, { requiresGrad: params, loss: block });
    try {
      assert.deepEqual(custom.module.inputNames(), builtin.module.inputNames());
      const a = builtin.module.run(...inputs);
      const b = custom.module.run(...inputs);
      assert.deepEqual(b.dims, a.dims);
      closeAll(b.data, a.data, `onnxblock.loss.${type} ${JSON.stringify(opts)}`, 1e-5, 1e-6);
      // and the same gradients
      for (const p of params) closeAll(custom.state.parameters.get(p).grad, builtin.state.parameters.get(p).grad, `${type} grad ${p}`, 1e-4, 1e-6);
    } finally {
      builtin.release();
      custom.release();
    }
  }
  // Python's keyword names work as well
  const py = new onnxblock.loss.CrossEntropyLoss({ ignore_index: 3 });
  assert.equal(py.ignoreIndex, 3);
  assert.deepEqual(new onnxblock.loss.BCEWithLogitsLoss({ pos_weight: [2] }).posWeight, [2]);
});

test('InferenceSession takes the same inputs as Module.run (ort-like objects, int32 for int64)', async () => {
  const dir = join(casesDir, 'tiny_transformer_frozen_adamw');
  const c = await readCase(dir);
  const s = await InferenceSession.create(model('tiny_transformer_frozen_adamw'));
  try {
    const ids = await loadRef(dir, c.inference.inputs.input_ids);
    const a = (await s.run({ input_ids: ids })).logits;
    const b = (await s.run({ input_ids: { type: 'int32', data: Int32Array.from(ids.data, Number), dims: ids.dims } })).logits;
    assert.deepEqual(Array.from(b.data), Array.from(a.data));
    await assert.rejects(s.run({ input_ids: new Float64Array(3) }), /input 'input_ids': unsupported data array Float64Array/);
    await assert.rejects(s.run({ input_ids: new Tensor('float32', new Float32Array(ids.size), ids.dims) }), /input 'input_ids' has dtype float; expected int64/);
  } finally {
    s.release();
  }
});

test('exportModelForInferencing writes a file (atomically) when given a path', async () => {
  const d = await mkdtemp(join(tmpdir(), 'webtrain-export-'));
  try {
    const p = join(d, 'inference.onnx');
    const bytes = await mlp.module.exportModelForInferencing(p, ['output']);
    assert.deepEqual(await readdir(d), ['inference.onnx']);
    assert.ok(Buffer.from(await readFile(p)).equals(Buffer.from(bytes)));
    const out = (await forward(p, { input: x })).output;
    assert.deepEqual(out.dims, [N, 10]);
    await assert.rejects(mlp.module.exportModelForInferencing(join(d, 'missing', 'm.onnx'), ['output']), /directory '.*missing' does not exist/);
    await assert.rejects(mlp.module.exportModelForInferencing(p, []), /give the output names to keep/);
    assert.deepEqual(await readdir(d), ['inference.onnx']);
  } finally {
    await rm(d, { recursive: true, force: true });
  }
});

test('a module without an eval model trains, and says so when asked to evaluate', async () => {
  const state = await CheckpointState.loadCheckpoint(mlp.art.checkpoint);
  const module = await Module.create(mlp.art.trainingModel, state);
  try {
    close(module.run(x, labels).data[0], expectedCE, 'train step without an eval model');
    module.eval();
    assert.throws(() => module.run(x, labels), /the module has no eval model \(give one to Module.create to use eval\(\)\)/);
    assert.throws(() => module.inputNames(), /has no eval model/);
    assert.deepEqual(module.inputNames(0), ['input', 'labels']);
    await assert.rejects(module.exportModelForInferencing(['output']), /eval model/);
  } finally {
    module.release();
    state.release();
  }
});
