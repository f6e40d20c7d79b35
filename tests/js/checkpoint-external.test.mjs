// Checkpoints with external data (ONNX Runtime's layout for checkpoints over 2 GB):
// saved as a small checkpoint file plus '<file>.data', loaded back bit-identically from a path,
// from bytes, a Blob and a URL given as externalData, and from a URL whose side file is fetched
// beside it, and in IndexedDB (fake-indexeddb here; tests/browser/idb.test.mjs: Chromium's) as
// chunked records; and the errors for a missing, short or wrongly given side file. The sizes here are
// small (externalData: true forces the layout); the format does not depend on them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, truncate, rename } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDBFactory } from 'fake-indexeddb';
import { artifacts, CheckpointState, Module, Optimizer, Tensor, WebtrainError } from '../../js/index.js';
import * as idb from '../../web/idb.js';

const dir = new URL('../golden/cases/mlp_ce_adamw/', import.meta.url);
let tmp;
let state;
let inline; // the trained state's checkpoint with optimizer state, written inline
let server;
let base;

async function bin(name, Type) {
  const b = await readFile(new URL(name, dir));
  return new Type(b.buffer, b.byteOffset, b.byteLength / Type.BYTES_PER_ELEMENT);
}

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'webtrain-ckext-'));
  const art = await artifacts.generateArtifacts(new URL('model.onnx', dir), { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  const x = new Tensor('float32', await bin('step0__input.bin', Float32Array), [8, 784]);
  const y = new Tensor('int32', await bin('step0__labels.bin', Int32Array), [8]);
  for (let i = 0; i < 3; i++) {
    module.runAll(x, y);
    optimizer.step();
    module.lazyResetGrad();
  }
  state.properties.set('epoch', 3);
  inline = state.toBytes({ includeOptimizerState: true });
  server = createServer(async (req, res) => {
    try {
      const body = await readFile(join(tmp, decodeURIComponent(req.url.slice(1))));
      res.writeHead(200, { 'content-length': body.byteLength }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}/`;
});

after(async () => {
  server?.close();
  await rm(tmp, { recursive: true, force: true });
});

const same = (loaded) => assert.deepEqual(loaded.toBytes({ includeOptimizerState: true }), inline, 'the reloaded state is the saved one, bit for bit');

test('saved with externalData: a small checkpoint file and its .data side file, in ONNX Runtime\'s layout', async () => {
  const path = join(tmp, 'run.ckpt');
  const head = await CheckpointState.saveCheckpoint(state, path, { includeOptimizerState: true, externalData: true });
  assert.deepEqual(new Uint8Array(await readFile(path)), head);
  const side = await stat(path + '.data');
  // the 784x128, 128 and 128x10 floats and their two AdamW moments; the 10-float bias (40 bytes,
  // under ONNX Runtime's 64) stays in the checkpoint file
  const P = 4 * (784 * 128 + 128 + 128 * 10 + 10);
  assert.equal(side.size, 3 * (P - 40));
  assert.ok(head.byteLength < 4096, `the checkpoint file holds names, shapes and offsets only (${head.byteLength} bytes)`);
  assert.ok(inline.byteLength > 3 * P);
  same(await CheckpointState.loadCheckpoint(path));
});

test('loaded from bytes, a Blob or a URL given as externalData, and from a URL with the side file beside it', async () => {
  const path = join(tmp, 'run.ckpt');
  const head = await readFile(path);
  const data = await readFile(path + '.data');
  same(await CheckpointState.loadCheckpoint(head, { externalData: new Uint8Array(data) }));
  same(await CheckpointState.loadCheckpoint(head, { externalData: [{ path: 'run.ckpt.data', data: new Uint8Array(data) }] }));
  same(await CheckpointState.loadCheckpoint(new Blob([head]), { externalData: new Blob([data]) }));
  same(await CheckpointState.loadCheckpoint(head, { externalData: new URL('run.ckpt.data', base) }));
  same(await CheckpointState.loadCheckpoint(`${base}run.ckpt`));
  same(await CheckpointState.loadCheckpoint(new URL('run.ckpt', base)));
});

test('a small state saves inline by default (externalData: \'auto\'), and inline is read as before', async () => {
  const path = join(tmp, 'small.ckpt');
  const bytes = await CheckpointState.saveCheckpoint(state, path, { includeOptimizerState: true });
  assert.deepEqual(bytes, inline);
  await assert.rejects(stat(path + '.data'), { code: 'ENOENT' });
  same(await CheckpointState.loadCheckpoint(path));
});

test('errors: the side file missing, cut short, not given, or given as something else', async () => {
  const path = join(tmp, 'bad.ckpt');
  await CheckpointState.saveCheckpoint(state, path, { includeOptimizerState: true, externalData: true });
  const head = await readFile(path);
  await assert.rejects(CheckpointState.loadCheckpoint(head), (e) => e instanceof WebtrainError && /external data file .*\.data'\): pass it as loadCheckpoint\(checkpoint, \{ externalData \}\)/.test(e.message));
  await assert.rejects(CheckpointState.loadCheckpoint(head, { externalData: 42 }), (e) => e instanceof TypeError && /externalData: expected a path, URL, .* got a number \(42\)/.test(e.message));
  await rename(path + '.data', path + '.moved');
  await assert.rejects(CheckpointState.loadCheckpoint(path), (e) => e instanceof WebtrainError && e.message.includes(`cannot read the checkpoint's external data file '${path}.data': no such file`));
  await rename(path + '.moved', path + '.data');
  const size = (await stat(path + '.data')).size;
  await truncate(path + '.data', size - 100);
  await assert.rejects(CheckpointState.loadCheckpoint(path), (e) => e instanceof WebtrainError && /past its end \(\d+ bytes\): the file is truncated or belongs to another checkpoint/.test(e.message));
  await assert.rejects(CheckpointState.loadCheckpoint(head, { externalData: new URL('nothing.data', base) }), (e) => e instanceof WebtrainError && e.status === 404);
  await assert.rejects(CheckpointState.saveCheckpoint(state, () => {}, { externalData: true }), (e) => e instanceof WebtrainError && /give a file path/.test(e.message));
  await assert.rejects(CheckpointState.saveCheckpoint(state, path, { externalData: 'yes' }), (e) => e instanceof TypeError && /externalData must be true, false or 'auto'/.test(e.message));
  // the failed loads left the state usable and nothing half-written
  same(state);
});

/** How many records the IndexedDB database's 'blobs' store holds (the chunks included). */
function records(factory, database) {
  return new Promise((resolve, reject) => {
    const open = factory.open(database);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const req = open.result.transaction('blobs').objectStore('blobs').count();
      req.onsuccess = () => {
        open.result.close();
        resolve(req.result);
      };
    };
  });
}

test('idb://: the side file in chunked records of one transaction; replaced, listed, deleted with its chunks', async () => {
  const factory = new IDBFactory();
  idb.configure({ indexedDB: factory, database: 'webtrain-ckext', chunkBytes: 100_000 });
  const head = await CheckpointState.saveCheckpoint(state, 'idb://runs/big', { includeOptimizerState: true, externalData: true });
  const P = 4 * (784 * 128 + 128 + 128 * 10 + 10);
  const [entry] = await idb.list('runs/');
  assert.equal(entry.name, 'runs/big');
  assert.equal(entry.size, head.byteLength + 3 * (P - 40), 'list counts the checkpoint file and its external data');
  // 9 segments (fc1.weight, fc1.bias, fc2.weight and their two moments each; fc2.bias stays in
  // the checkpoint file) in chunks of 100000 bytes: fc1.weight's 401408 take 5, the others 1
  assert.equal(await records(factory, 'webtrain-ckext'), 1 + 3 * 5 + 6);
  assert.deepEqual(await idb.load('idb://runs/big'), head, 'the checkpoint file is stored as it is');
  same(await CheckpointState.loadCheckpoint('idb://runs/big'));
  // replaced by a plain checkpoint: its chunks go in the same transaction
  const plain = await CheckpointState.saveCheckpoint(state, 'idb://runs/big');
  assert.equal(await records(factory, 'webtrain-ckext'), 1);
  assert.deepEqual((await CheckpointState.loadCheckpoint('idb://runs/big')).toBytes(), plain);
  // with external data again, in larger chunks: only the new chunks remain
  idb.configure({ chunkBytes: 1_000_000 });
  await CheckpointState.saveCheckpoint(state, 'idb://runs/big', { includeOptimizerState: true, externalData: true });
  assert.equal(await records(factory, 'webtrain-ckext'), 1 + 9);
  same(await CheckpointState.loadCheckpoint('idb://runs/big'));
  assert.equal(await idb.delete('idb://runs/big'), true);
  assert.equal(await records(factory, 'webtrain-ckext'), 0, 'delete takes the chunks too');
  await assert.rejects(CheckpointState.loadCheckpoint('idb://runs/big'), /no IndexedDB entry 'idb:\/\/runs\/big'/);
  // a checkpoint file stored without its chunks (by idb.save) says so
  await idb.save('idb://runs/orphan', head);
  await assert.rejects(CheckpointState.loadCheckpoint('idb://runs/orphan'), (e) => e instanceof WebtrainError && /its data is not stored/.test(e.message));
});
