// module.predict: a forward-only run on the current parameters (no labels, no loss), equal to the
// exported inference model run through InferenceSession after training steps; no heap allocation
// after its first call for a shape; train/eval runs, the gradients pending and eval outputs as
// before. The eval model webtrain generates outputs the model's outputs after the loss, so fit's
// metrics work without additionalOutputNames; ONNX Runtime's artifacts (loss only) keep the
// clear error, and predict there needs the outputs named.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init, CheckpointState, Module, Optimizer, InferenceSession, Tensor, WebtrainError, fit } from '../../js/index.js';
import { mlpObjects, mlpInputs as batch, mlpLabels as labels } from './mlp.mjs';

const ortMnist = fileURLToPath(new URL('../data/ort-mnist/', import.meta.url));
let o, module, optimizer;

before(async () => {
  o = await mlpObjects();
  ({ module, optimizer } = o);
});

after(() => o?.release());

test('predict equals the exported inference model on the current parameters', async () => {
  for (let i = 0; i < 3; i++) {
    module.run(batch(8, i), labels(8));
    optimizer.step();
    module.lazyResetGrad();
  }
  const x = batch(5, 11);
  const out = module.predict({ input: x });
  assert.deepEqual(Object.keys(out), ['output']);
  assert.deepEqual(out.output.dims, [5, 10]);
  const session = await InferenceSession.create(await module.exportModelForInferencing(['output']));
  try {
    const ref = session.runSync({ input: x }).output;
    out.output.data.forEach((v, i) => assert.ok(Math.abs(v - ref.data[i]) <= 1e-6 * Math.max(1, Math.abs(ref.data[i])), `output[${i}]: ${v} vs ${ref.data[i]}`));
  } finally {
    session.release();
  }
  // the one input as a tensor, the outputs named
  assert.deepEqual(module.predict(x, ['output']).output.data, out.output.data);
});

test('predict allocates nothing in the heap after its first call for a shape', async () => {
  const core = await init();
  const x = batch(16, 3);
  module.predict({ input: x });
  const before = core.heapStats();
  const arena = module.memoryStats().arena;
  for (let i = 0; i < 20; i++) module.predict({ input: x });
  const after = core.heapStats();
  assert.equal(after.mallocInUse, before.mallocInUse);
  assert.equal(after.mallocPeak, before.mallocPeak);
  assert.equal(module.memoryStats().arena, arena);
});

test('predict leaves training as it was: mode, the gradients pending, eval outputs', () => {
  module.train().run(batch(8, 1), labels(8));
  module.predict({ input: batch(3, 2) });
  assert.equal(module.isTraining, true);
  optimizer.step(); // the run's gradients are still there to apply
  module.lazyResetGrad();
  // eval steps return what they did: the loss alone, as the training model does
  assert.deepEqual(module.outputNames(1), ['loss']);
  const loss = module.eval().run(batch(4, 5), labels(4));
  assert.ok(loss instanceof Tensor && loss.size === 1);
  module.train();
  assert.throws(() => module.predict({ input: batch(2, 0) }, ['nope']), /predict: 'nope' is not a value of the eval model/);
  assert.throws(() => module.predict({ inputs: batch(2, 0) }), /'inputs' is not an input of the eval model/);
});

test('fit: metrics from the eval model of generated artifacts, no additionalOutputNames needed', async () => {
  const x = batch(24, 7);
  const y = labels(24);
  const r = await fit(module, optimizer, { x, y, batchSize: 8, epochs: 2, validation: { x: batch(8, 9), y: labels(8) }, metrics: ['accuracy'] });
  for (const e of r.history) assert.ok(e.valAccuracy >= 0 && e.valAccuracy <= 1, `epoch ${e.epoch}: valAccuracy ${e.valAccuracy}`);
});

test("ONNX Runtime's artifacts (its MNIST demo's, 'output' additional): predict's outputs by default, and metrics", async () => {
  const s = await CheckpointState.loadCheckpoint(new Uint8Array(readFileSync(`${ortMnist}checkpoint`)));
  const m = await Module.create(readFileSync(`${ortMnist}training_model.onnx`), s, readFileSync(`${ortMnist}eval_model.onnx`));
  const o = await Optimizer.create(readFileSync(`${ortMnist}optimizer_model.onnx`), m);
  try {
    const x = batch(8, 4);
    const y = new Tensor(BigInt64Array.from({ length: 8 }, (_, i) => BigInt(i % 10)), [8]);
    const r = await fit(m, o, { x, y, batchSize: 8, validation: { x, y }, metrics: ['accuracy'] });
    assert.equal(typeof r.history[0].valAccuracy, 'number');
    const out = m.predict({ input: x });
    assert.deepEqual(Object.keys(out), ['output']);
    const session = await InferenceSession.create(await m.exportModelForInferencing(['output']));
    assert.deepEqual(out.output.data, session.runSync({ input: x }).output.data);
    session.release();
  } finally {
    o.release();
    m.release();
    s.release();
  }
});

test('metrics with neither validation data nor the outputs in the training model: the clear error', async () => {
  await assert.rejects(
    () => fit(module, optimizer, { x: batch(8, 1), y: labels(8), batchSize: 8, metrics: ['accuracy'] }),
    (err) => err instanceof WebtrainError && /metrics need the model's output \(e\.g\. its logits\) next to the loss: give validation data .* or generate the artifacts with additionalOutputNames/.test(err.message),
  );
});
