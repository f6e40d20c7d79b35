// Models saved with external data (model.onnx + model.onnx.data), in Node: side files found
// beside a model path, the externalData option (bytes, ArrayBuffer, path, file: URL, Blob),
// InferenceSession against onnxruntime-node, and the training flow against the same model with
// its weights embedded, bit for bit. Test models: tests/data/external/make.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { InferenceSession, CheckpointState, Module, Optimizer, Tensor, artifacts, onnxblock } from '../../js/index.js';

const dir = fileURLToPath(new URL('../data/external/', import.meta.url));
const file = (name) => join(dir, name);
const X = Float32Array.from({ length: 5 * 4 }, (_, i) => Math.sin(i * 0.7) * 2);
const feeds = () => ({ X: new Tensor('float32', X, [5, 4]) });

async function logits(model, options) {
  const s = await InferenceSession.create(model, options);
  try {
    return (await s.run(feeds())).logits.data;
  } finally {
    s.release();
  }
}

test('InferenceSession: side file beside a path; outputs equal the embedded model and agree with onnxruntime-node', async () => {
  const embedded = await logits(file('mlp-embedded.onnx'));
  assert.deepEqual(await logits(file('mlp.onnx')), embedded);
  assert.deepEqual(await logits(new URL('../data/external/mlp.onnx', import.meta.url)), embedded); // a file: URL
  assert.deepEqual(await logits(file('sub.onnx')), embedded); // location 'weights/sub.data'
  const o = await ort.InferenceSession.create(file('mlp.onnx'));
  const ref = (await o.run({ X: new ort.Tensor('float32', X, [5, 4]) })).logits.data;
  for (let i = 0; i < ref.length; i++) assert.ok(Math.abs(embedded[i] - ref[i]) <= 1e-5 + 1e-5 * Math.abs(ref[i]), `logits[${i}]: ${embedded[i]} vs ${ref[i]}`);
});

test('InferenceSession: bytes + externalData as Uint8Array, ArrayBuffer, path, file: URL, Blob', async () => {
  const embedded = await logits(file('mlp-embedded.onnx'));
  const model = new Uint8Array(await readFile(file('mlp.onnx')));
  const data = new Uint8Array(await readFile(file('mlp.onnx.data')));
  const padded = new Uint8Array(data.length + 7);
  padded.set(data, 7); // a view at an offset into a larger buffer
  for (const d of [data, data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength), padded.subarray(7), file('mlp.onnx.data'), new URL('../data/external/mlp.onnx.data', import.meta.url), new Blob([data])]) {
    assert.deepEqual(await logits(model, { externalData: [{ path: 'mlp.onnx.data', data: d }] }), embedded, `data: ${d?.constructor?.name}`);
  }
  // './' in the path is the same file; externalData wins over the file beside a path
  assert.deepEqual(await logits(model, { externalData: [{ path: './mlp.onnx.data', data }] }), embedded);
  const zeros = new Uint8Array(data.length);
  const z = await logits(file('mlp.onnx'), { externalData: [{ path: 'mlp.onnx.data', data: zeros }] });
  assert.deepEqual(Array.from(z), new Array(15).fill(0));
});

/** generateArtifacts -> Module.create -> 3 steps -> export: losses, parameters and the export. */
async function trainFlow(source, options = {}, moduleSources = null) {
  const art = await artifacts.generateArtifacts(source, { loss: 'CrossEntropyLoss', optimizer: 'AdamW', ...options });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const [train, evalModel, extra] = moduleSources ? await moduleSources(art) : [art.trainingModel, art.evalModel, {}];
  const module = await Module.create(train, state, evalModel, extra);
  const opt = await Optimizer.create(art.optimizerModel, module);
  const labels = new Tensor('int64', BigInt64Array.from([0n, 1n, 2n, 1n, 0n]), [5]);
  const losses = [];
  for (let i = 0; i < 3; i++) {
    losses.push(module.run(feeds().X, labels).data[0]);
    opt.step();
    module.lazyResetGrad();
  }
  const exported = await module.exportModelForInferencing(null, ['logits']);
  const params = [...state.parameters.values()].map((p) => [p.name, Array.from(p.data)]);
  opt.release();
  module.release();
  state.release();
  return { art, losses, exported, params };
}

test('generateArtifacts from a path with a side file: artifacts, training and export equal the embedded model bit for bit; ORT runs the export', async () => {
  const a = await trainFlow(file('mlp-embedded.onnx'));
  const b = await trainFlow(file('mlp.onnx'));
  for (const k of ['trainingModel', 'evalModel', 'optimizerModel', 'checkpoint']) assert.deepEqual(b.art[k], a.art[k], k);
  assert.deepEqual(b.losses, a.losses);
  assert.deepEqual(b.params, a.params);
  assert.deepEqual(b.exported, a.exported);
  const c = await trainFlow(await readFile(file('mlp.onnx')), { externalData: [{ path: 'mlp.onnx.data', data: new Blob([await readFile(file('mlp.onnx.data'))]) }] });
  assert.deepEqual(c.exported, a.exported);
  // the exported model is plain ONNX (weights inside) that onnxruntime-node loads
  const o = await ort.InferenceSession.create(b.exported);
  const ref = (await o.run({ X: new ort.Tensor('float32', X, [5, 4]) })).logits.data;
  const ours = await logits(b.exported);
  for (let i = 0; i < ref.length; i++) assert.ok(Math.abs(ours[i] - ref[i]) <= 1e-5 + 1e-5 * Math.abs(ref[i]));
});

test('Module.create: training and eval models saved with external data, from paths and from bytes + externalData', async (t) => {
  const tmp = await mkdtemp(join(tmpdir(), 'wt-ext-'));
  t.after(() => rm(tmp, { recursive: true, force: true }));
  const a = await trainFlow(file('mlp-embedded.onnx'));
  // ONNX's own writer moves the generated models' initializers to side files
  const toExternal = async (art) => {
    const script = `import onnx, sys
for name in ('training_model', 'eval_model'):
    m = onnx.load(f'{sys.argv[1]}/{name}.src.onnx')
    onnx.save_model(m, f'{sys.argv[1]}/{name}.onnx', save_as_external_data=True, all_tensors_to_one_file=True, location=f'{name}.onnx.data', size_threshold=0)`;
    await writeFile(join(tmp, 'training_model.src.onnx'), art.trainingModel);
    await writeFile(join(tmp, 'eval_model.src.onnx'), art.evalModel);
    const r = spawnSync('/usr/bin/python3', ['-c', script, tmp], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  };
  const b = await trainFlow(file('mlp-embedded.onnx'), {}, async (art) => {
    await toExternal(art);
    return [join(tmp, 'training_model.onnx'), join(tmp, 'eval_model.onnx'), {}];
  });
  assert.deepEqual(b.losses, a.losses);
  assert.deepEqual(b.exported, a.exported);
  // (the generated eval model has no initializers: its parameters come from the checkpoint)
  const c = await trainFlow(file('mlp-embedded.onnx'), {}, async () => [
    await readFile(join(tmp, 'training_model.onnx')),
    await readFile(join(tmp, 'eval_model.onnx')),
    { externalData: [{ path: 'training_model.onnx.data', data: join(tmp, 'training_model.onnx.data') }] },
  ]);
  assert.deepEqual(c.losses, a.losses);
  // the side file not given: a clear error, and nothing is left half built
  const state = await CheckpointState.loadCheckpoint(a.art.checkpoint);
  await assert.rejects(
    Module.create(await readFile(join(tmp, 'training_model.onnx')), state, join(tmp, 'eval_model.onnx')),
    /cannot create module: .*tensor '[^']+': external file 'training_model.onnx.data' is not available: the model was given as bytes .*externalData: \[\{ path: 'training_model.onnx.data', data \}\]/,
  );
  await assert.rejects(
    Module.create(join(tmp, 'training_model.onnx'), state, join(tmp, 'eval_model.onnx'), { externalData: [{ path: 'eval_model.onnx.data', data: new Uint8Array(8) }] }),
    /Module.create: externalData 'eval_model.onnx.data' is not referenced by the model \(its tensors are stored in 'training_model.onnx.data'\)/,
  );
  const m = await Module.create(join(tmp, 'training_model.onnx'), state, join(tmp, 'eval_model.onnx'));
  m.release();
  state.release();
});

test('onnxblock.buildModel on a base with a side file: the same model as on the embedded base', async () => {
  class Doubled extends onnxblock.Block {
    constructor() {
      super();
      this._add = new onnxblock.blocks.Add();
    }
    build(x) {
      return this._add(x, x);
    }
  }
  const a = await onnxblock.buildModel(file('mlp-embedded.onnx'), new Doubled());
  const b = await onnxblock.buildModel(file('mlp.onnx'), new Doubled());
  const c = await onnxblock.buildModel(await readFile(file('mlp.onnx')), new Doubled(), { externalData: [{ path: 'mlp.onnx.data', data: file('mlp.onnx.data') }] });
  assert.deepEqual(b.bytes, a.bytes);
  assert.deepEqual(c.bytes, a.bytes);
  const doubled = await logits(file('mlp-embedded.onnx'));
  const s = await InferenceSession.create(b.bytes);
  const out = (await s.run(feeds()))[b.outputNames[0]].data;
  s.release();
  assert.deepEqual(Array.from(out), Array.from(doubled, (v) => v + v));
});
