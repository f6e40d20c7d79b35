// web/idb.js under Node with fake-indexeddb (the browser tests, tests/browser/, use Chromium's
// real IndexedDB): idb:// locations for checkpoints, artifacts, exported models; list, has,
// delete, clear; replacing an entry; clear errors.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { IDBFactory } from 'fake-indexeddb';
import { CheckpointState, Module, Optimizer, InferenceSession, Tensor, artifacts, WebtrainError } from '../../js/index.js';
import * as idb from '../../web/idb.js';
import { readCase, inputsOf, artifactOptions } from '../golden/golden.mjs';

const dir = join(new URL('../golden/cases/', import.meta.url).pathname, 'mlp_ce_adamw');
const c = await readCase(dir);
const batches = [];
for (const s of c.steps.slice(0, 3)) batches.push(await inputsOf(dir, s.inputs, c.training_graph_input_names));

beforeEach(() => idb.configure({ indexedDB: new IDBFactory(), database: 'webtrain-test' }));

function bitEqual(a, b, what) {
  assert.equal(a.length, b.length, what);
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) assert.fail(`${what}[${i}]: ${a[i]} != ${b[i]}`);
}

test('bytes: save, load, has, list, replace, delete, clear', async () => {
  assert.deepEqual(await idb.list(), []);
  assert.equal(await idb.has('a'), false);
  const m = await idb.save('idb://a', new Uint8Array([1, 2, 3]));
  assert.equal(m.size, 3);
  // A view into a larger buffer stores only its bytes.
  const big = new Uint8Array([9, 9, 4, 5, 9]);
  await idb.save('dir/b', big.subarray(2, 4));
  assert.deepEqual([...(await idb.load('idb://dir/b'))], [4, 5]);
  assert.deepEqual([...(await idb.load('a'))], [1, 2, 3]);
  assert.equal(await idb.has('idb://a'), true);
  await idb.save('a', new Uint8Array([7]));
  assert.deepEqual([...(await idb.load('a'))], [7]);
  const all = await idb.list();
  assert.deepEqual(all.map((e) => [e.name, e.url, e.size]), [['a', 'idb://a', 1], ['dir/b', 'idb://dir/b', 2]]);
  assert.ok(all.every((e) => typeof e.modified === 'number' && e.modified > 0));
  assert.deepEqual((await idb.list('idb://dir/')).map((e) => e.name), ['dir/b']);
  assert.equal(await idb.delete('idb://a'), true);
  assert.equal(await idb.delete('a'), false);
  assert.deepEqual((await idb.list()).map((e) => e.name), ['dir/b']);
  assert.equal(await idb.clear(), 1);
  assert.deepEqual(await idb.list(), []);
});

test('errors name the entry', async () => {
  await idb.save('x', new Uint8Array(1));
  await assert.rejects(idb.load('idb://nope'), (e) => e instanceof WebtrainError && /no IndexedDB entry 'idb:\/\/nope'.*holds: x/.test(e.message));
  await assert.rejects(CheckpointState.loadCheckpoint('idb://nope'), /no IndexedDB entry 'idb:\/\/nope'/);
  await assert.rejects(idb.save('idb://', new Uint8Array(1)), /names no entry/);
  await assert.rejects(idb.save('y', 'text'), /expected bytes/);
  idb.configure({ indexedDB: null });
  const saved = globalThis.indexedDB;
  try {
    delete globalThis.indexedDB;
    await assert.rejects(idb.load('idb://x'), /need IndexedDB/);
  } finally {
    if (saved) globalThis.indexedDB = saved;
  }
});

test('checkpoints, artifacts and exported models at idb:// locations', async () => {
  const opts = { ...artifactOptions(c), artifactDirectory: 'idb://mlp/' };
  const art = await artifacts.generateArtifacts(join(dir, 'model.onnx'), opts);
  assert.deepEqual((await idb.list('mlp/')).map((e) => e.name), ['mlp/checkpoint', 'mlp/eval_model.onnx', 'mlp/optimizer_model.onnx', 'mlp/training_model.onnx']);
  assert.deepEqual(await idb.load('idb://mlp/training_model.onnx'), art.trainingModel);

  const state = await CheckpointState.loadCheckpoint('idb://mlp/checkpoint');
  const module = await Module.create('idb://mlp/training_model.onnx', state, 'idb://mlp/eval_model.onnx');
  const optimizer = await Optimizer.create('idb://mlp/optimizer_model.onnx', module);
  module.train();
  module.run(...batches[0]);
  optimizer.step();
  module.lazyResetGrad();
  state.properties.set('epoch', 3);
  state.properties.set('note', 'from idb');
  await CheckpointState.saveCheckpoint(state, 'idb://mlp-trained', { includeOptimizerState: true });

  // Reload from IndexedDB: parameters and properties bit for bit; training continues identically.
  const state2 = await CheckpointState.loadCheckpoint('idb://mlp-trained');
  for (const [n, p] of state.parameters) bitEqual(p.data, state2.parameters.get(n).data, n);
  assert.equal(state2.properties.get('epoch'), 3);
  assert.equal(state2.properties.get('note'), 'from idb');
  const module2 = await Module.create(art.trainingModel, state2, art.evalModel);
  const optimizer2 = await Optimizer.create(art.optimizerModel, module2);
  for (const [mod, opt] of [[module, optimizer], [module2, optimizer2]]) {
    mod.train();
    mod.run(...batches[1]);
    opt.step();
    mod.lazyResetGrad();
  }
  for (const [n, p] of state.parameters) bitEqual(p.data, state2.parameters.get(n).data, `after resume: ${n}`);

  // Exported inference model: into IndexedDB and back into an InferenceSession.
  const exported = await module.exportModelForInferencing('idb://mlp-infer.onnx', ['output']);
  assert.deepEqual(await idb.load('idb://mlp-infer.onnx'), exported);
  const session = await InferenceSession.create('idb://mlp-infer.onnx');
  const out = await session.run({ input: batches[0][0] instanceof Tensor ? batches[0][0] : new Tensor(batches[0][0].data, batches[0][0].dims) });
  assert.deepEqual(out.output.dims, [c.batch_size, 10]);
  for (const o of [session, optimizer, module, state, optimizer2, module2, state2]) o.release();
});

// Chromium ignores CDP's quota override, and fake-indexeddb has no quota: the storage layer
// below is fake-indexeddb with one fault injected — puts over 1 MB fail the way IndexedDB
// reports an exhausted quota (a DOMException named QuotaExceededError). What is tested is
// webtrain's handling: the error it raises and that the previous version stays.
test('quota exhausted: a clear WebtrainError, the previous version intact', async () => {
  const factory = new IDBFactory();
  const { IDBObjectStore: Store } = await import('fake-indexeddb');
  const put = Store.prototype.put;
  Store.prototype.put = function (value, key) {
    if (value instanceof ArrayBuffer && value.byteLength > 1 << 20) throw new DOMException('Quota exceeded', 'QuotaExceededError');
    return put.call(this, value, key);
  };
  try {
    idb.configure({ indexedDB: factory });
    await idb.save('ckpt', new Uint8Array([1, 2, 3]));
    await assert.rejects(idb.save('idb://ckpt', new Uint8Array(2 << 20)), (e) => {
      assert.ok(e instanceof WebtrainError);
      assert.equal(e.code, 'QuotaExceededError');
      assert.match(e.message, /^cannot save 'idb:\/\/ckpt' \(2097152 bytes\) to IndexedDB: the browser's storage quota for this site is exhausted/);
      return true;
    });
    assert.deepEqual([...(await idb.load('ckpt'))], [1, 2, 3]);
    assert.deepEqual((await idb.list()).map((e) => [e.name, e.size]), [['ckpt', 3]]);
  } finally {
    Store.prototype.put = put;
  }
});
