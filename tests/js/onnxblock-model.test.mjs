// Forward models built with onnxblock on a base model (ONNX Runtime's ForwardBlock idea): the
// result runs in an InferenceSession and goes to generateArtifacts like any model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { artifacts, CheckpointState, InferenceSession, Module, Optimizer, Tensor, onnxblock } from '../../js/index.js';

const base = new URL('../../demo/models/digits/model.onnx', import.meta.url);

class ScaledLogits extends onnxblock.Block {
  constructor(scale) {
    super();
    this._scale = new onnxblock.blocks.Constant(scale);
    this._mul = new onnxblock.blocks.Mul();
  }
  build(logits) {
    return this._mul(logits, this._scale());
  }
}

async function batch() {
  const x = await readFile(new URL('../../demo/models/digits/personal_test_x.bin', import.meta.url));
  const y = await readFile(new URL('../../demo/models/digits/personal_test_y.bin', import.meta.url));
  return {
    x: new Tensor('float32', new Float32Array(x.buffer, x.byteOffset, 16 * 64).slice(), [16, 64]),
    y: new Tensor('int32', new Int32Array(y.buffer, y.byteOffset, 16).slice(), [16]),
  };
}

test('buildModel stacks blocks on a base model; the model runs and trains', async () => {
  const model = await onnxblock.buildModel(base, new ScaledLogits(0.5));
  assert.ok(model instanceof onnxblock.OnnxblockModel);
  assert.deepEqual(model.inputNames, ['input']);
  assert.equal(model.outputNames.length, 1);
  const { x, y } = await batch();
  const plain = await InferenceSession.create(base);
  const built = await InferenceSession.create(model.bytes);
  const a = (await plain.run({ input: x })).output.data;
  const b = (await built.run({ input: x }))[model.outputNames[0]].data;
  for (let i = 0; i < a.length; i++) assert.ok(Math.abs(b[i] - 0.5 * a[i]) < 1e-6, `${i}: ${b[i]} vs ${a[i] / 2}`);
  plain.release();
  built.release();

  const art = await artifacts.generateArtifacts(model, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  const first = module.run(x, y).data[0];
  for (let i = 0; i < 20; i++) {
    module.run(x, y);
    optimizer.step();
    module.lazyResetGrad();
  }
  assert.ok(module.run(x, y).data[0] < first, 'the loss went down');
  for (const o of [optimizer, module, state]) o.release();
});

test('buildModel needs a Block', async () => {
  await assert.rejects(onnxblock.buildModel(base, {}), /must be an onnxblock.Block/);
});
