// Weights held once: a frozen base saved with external data (a few tens of MB, made
// by tests/bench/make_big_base.py) goes through the README's flow — generateArtifacts from its
// path without artifactDirectory, loadCheckpoint, Module.create, Optimizer.create on the
// returned bytes, with no option — and its frozen weights exist once: not in the artifacts'
// bytes, not read during generation, and in the wasm heap once, shared by the training and eval
// models. Numbers agree bit for bit with the artifacts that embed the weights
// (keepExternalData: false); artifacts written to another folder get the side file beside them
// and load in onnxruntime-node; artifacts generated from bytes find the side file given with
// them, and copies of their bytes say which file to pass; from a URL the side file streams into
// the heap, and onProgress reports the bytes as they land.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { artifacts, CheckpointState, InferenceSession, Module, Optimizer, Tensor, init } from '../../js/index.js';
import { baseFlow, folderEvalMatchesOrt, trainSteps } from './base-flow.mjs';

const MB = 2 ** 20;
const LAYERS = 5;
const WIDTH = 1280; // 5 x 1280^2 floats: 31 MiB of frozen weights
const BATCH = 4;
const HEAD = ['head.weight', 'head.bias'];

const x = () => new Tensor('float32', Float32Array.from({ length: BATCH * WIDTH }, (_, i) => Math.sin(i * 0.37)), [BATCH, WIDTH]);
const y = () => new Tensor('int32', Int32Array.from({ length: BATCH }, (_, i) => i % 10), [BATCH]);

/** The README's flow on `model` (3 train steps, an eval step, the export); heap figures. */
const flow = (model, options = {}, moduleOptions = {}) =>
  baseFlow(model, {
    options: { requiresGrad: HEAD, loss: 'CrossEntropyLoss', optimizer: 'AdamW', ...options },
    moduleOptions,
    x,
    y,
    after: async (module, core) => {
      const exported = await module.exportModelForInferencing(['logits']);
      const exportedMemory = core.heapStats().memory;
      const byReference = await module.exportModelForInferencing(['logits'], { keepExternalData: true });
      return { exported, exportedMemory, byReference };
    },
  });

if (!isMainThread && workerData.checkpoint) {
  // a fresh wasm instance loading a checkpoint file
  const core = await init();
  const state = await CheckpointState.loadCheckpoint(workerData.checkpoint);
  parentPort.postMessage({ memory: core.heapStats().memory, size: state.parameters.size });
  state.release();
} else if (!isMainThread) {
  // a fresh wasm instance: its heap holds this flow only
  const { art, exported, byReference, ...r } = await flow(workerData.model);
  parentPort.postMessage({ ...r, exportedLength: exported.byteLength });
} else {
  const dir = await mkdtemp(join(tmpdir(), 'webtrain-once-'));
  const model = join(dir, 'base.onnx');
  const made = spawnSync('/usr/bin/python3', [fileURLToPath(new URL('../bench/make_big_base.py', import.meta.url)), model, String(LAYERS), String(WIDTH)], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  const weights = (await stat(`${model}.data`)).size;
  const inWorker = (data = { model }) => new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: data });
    w.once('message', resolve);
    w.once('error', reject);
  });

  test.after(() => rm(dir, { recursive: true, force: true }));

  test('from a path: the frozen weights are not in the artifacts, not read to generate them, and in the heap once', async () => {
    const r = await inWorker();
    // the training and eval models refer to base.onnx.data: a few KB each, not 31 MiB
    assert.ok(r.sizes.trainingModel < 64 * 1024 && r.sizes.evalModel < 64 * 1024, JSON.stringify(r.sizes));
    // generating read none of the frozen weights (the head, 50 KB, is in the checkpoint)
    assert.ok(r.generated < 4 * MB, `wasm Memory after generateArtifacts: ${(r.generated / MB).toFixed(1)} MB`);
    // training and eval models hold the weights once (a second copy would be 31 MiB more); beside
    // them, only the GEMM's packed copies of frozen weights (packed once, not every step), which
    // a module bounds to 64 MiB whatever the base's size (here all 5 layers: 31 MiB)
    assert.ok(r.packed > 0.99 * weights && r.packed <= 64 * MB, `packed ${(r.packed / MB).toFixed(1)} MB`);
    const bound = weights * 1.02 + r.packed + 6 * MB;
    assert.ok(r.memory <= bound, `wasm Memory after training ${(r.memory / MB).toFixed(1)} MB; the weights are ${(weights / MB).toFixed(1)} MB, packed ${(r.packed / MB).toFixed(1)} MB, bound ${(bound / MB).toFixed(1)}`);
    assert.ok(r.losses.every(Number.isFinite) && r.losses[2] < r.losses[0], String(r.losses));
    // exporting with the weights inside needs the serialized model once more, not copies of the graph
    const exportBound = weights + r.packed + r.exportedLength * 1.02 + 8 * MB;
    assert.ok(r.exportedMemory <= exportBound, `wasm Memory after the export: ${(r.exportedMemory / MB).toFixed(1)} MB, bound ${(exportBound / MB).toFixed(1)}`);
  });

  test('by reference and embedded (keepExternalData: false) train, evaluate and export bit for bit alike', async () => {
    const a = await flow(model);
    const b = await flow(model, { keepExternalData: false });
    assert.ok(b.sizes.trainingModel > 0.99 * weights && b.sizes.evalModel > 0.99 * weights, 'embedded: the weights are inside');
    assert.deepEqual(a.losses, b.losses);
    assert.equal(a.evalLoss, b.evalLoss);
    assert.deepEqual(a.exported, b.exported);
    // exported by reference: the same model with the weights in the side file; ONNX Runtime agrees
    assert.ok(a.byReference.byteLength < 64 * 1024, `${a.byReference.byteLength} bytes`);
    const out = join(dir, 'export');
    await (await import('node:fs/promises')).mkdir(out, { recursive: true });
    const feeds = { X: new ort.Tensor('float32', x().data, [BATCH, WIDTH]) };
    const embedded = await (await ort.InferenceSession.create(a.exported)).run(feeds);
    await (await import('node:fs/promises')).writeFile(join(out, 'model.onnx'), a.byReference);
    await (await import('node:fs/promises')).link(`${model}.data`, join(out, 'base.onnx.data'));
    const referenced = await (await ort.InferenceSession.create(join(out, 'model.onnx'))).run(feeds);
    assert.deepEqual(referenced.logits.data, embedded.logits.data);
    // and webtrain's InferenceSession finds the side file of the returned bytes
    const s = await InferenceSession.create(a.byReference);
    const ours = (await s.run({ X: x() })).logits.data;
    s.release();
    for (let i = 0; i < ours.length; i++) assert.ok(Math.abs(ours[i] - embedded.logits.data[i]) <= 1e-4 * Math.max(1, Math.abs(embedded.logits.data[i])), `logits[${i}]`);
    assert.deepEqual(a.art.checkpoint, b.art.checkpoint);
    await assert.rejects(artifacts.generateArtifacts(model, { requiresGrad: HEAD, keepExternalData: 'yes' }), /keepExternalData must be true or false; got 'yes'/);
  });

  test('artifactDirectory elsewhere: the side file is placed beside the artifacts (linked), and onnxruntime-node runs the eval model', async () => {
    const out = join(dir, 'artifacts');
    const a = await artifacts.generateArtifacts(model, { requiresGrad: HEAD, loss: 'CrossEntropyLoss', optimizer: 'AdamW', artifactDirectory: out });
    const placed = await stat(join(out, 'base.onnx.data'));
    assert.equal(placed.size, weights);
    assert.equal(placed.ino, (await stat(`${model}.data`)).ino, 'a hard link, not a copy');
    // from the folder's paths; ONNX Runtime reads the same eval model, its frozen weights from the side file
    await folderEvalMatchesOrt(out, a.checkpoint, x, y);
    // generated again beside the base: the side file is its own, left as it is
    await artifacts.generateArtifacts(model, { requiresGrad: HEAD, loss: 'CrossEntropyLoss', artifactDirectory: dir, prefix: 'again_' });
    assert.equal((await stat(`${model}.data`)).size, weights);
  });

  test('a copy of artifacts whose base was given by path is known by its content (what worker() sends back)', async () => {
    const named = await artifacts.generateArtifacts(model, { requiresGrad: HEAD, loss: 'CrossEntropyLoss' });
    const losses = [];
    for (const [train, evalModel] of [[named.trainingModel, named.evalModel], [new Uint8Array(named.trainingModel), structuredClone(named.evalModel)]]) {
      const state = await CheckpointState.loadCheckpoint(named.checkpoint);
      const module = await Module.create(train, state, evalModel);
      losses.push(module.runAll(x(), y())[0].data[0]);
      module.release();
      state.release();
    }
    assert.equal(losses[1], losses[0]);
  });

  test('from bytes with externalData: the returned artifacts find the side file; copies of them say what to pass', async () => {
    const bytes = new Uint8Array(await readFile(model));
    const data = new Uint8Array(await readFile(`${model}.data`));
    const ref = await flow(model);
    const r = await flow(bytes, { externalData: [{ path: 'base.onnx.data', data }] });
    assert.deepEqual(r.losses, ref.losses);
    // a base given as bytes is not kept alive for copies: a copy says which file to pass
    const art = await artifacts.generateArtifacts(bytes, { requiresGrad: HEAD, loss: 'CrossEntropyLoss', externalData: [{ path: 'base.onnx.data', data }] });
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const copy = new Uint8Array(art.trainingModel); // a copy no longer knows its base
    await assert.rejects(Module.create(copy, state), /external file 'base\.onnx\.data' is not available: the model was given as bytes.*externalData: \[\{ path: 'base\.onnx\.data', data \}\]/);
    const module = await Module.create(copy, state, new Uint8Array(art.evalModel), { externalData: [{ path: 'base.onnx.data', data: `${model}.data` }] });
    assert.ok(Number.isFinite(module.runAll(x(), y())[0].data[0]));
    module.release();
    state.release();
  });

  test('from a URL: the same artifacts by reference, Module.create streams the side file into the heap with onProgress; loadCheckpoint reports progress', async (t) => {
    const server = createServer((req, res) => {
      const name = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1));
      stat(join(dir, name)).then((st) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': st.size });
        createReadStream(join(dir, name)).pipe(res);
      }, () => res.writeHead(404).end());
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => server.close());
    const url = `http://127.0.0.1:${server.address().port}/base.onnx`;
    const ref = await flow(model);
    const art = await artifacts.generateArtifacts(url, { requiresGrad: HEAD, loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
    assert.deepEqual(art.checkpoint, ref.art.checkpoint);
    const progress = [];
    const ckptProgress = [];
    const ckpt = join(dir, 'url.ckpt');
    await (await import('node:fs/promises')).writeFile(ckpt, art.checkpoint);
    const state = await CheckpointState.loadCheckpoint(ckpt, { onProgress: (p) => ckptProgress.push(p) });
    assert.deepEqual(ckptProgress.at(-1), { loaded: art.checkpoint.byteLength, total: art.checkpoint.byteLength });
    const module = await Module.create(art.trainingModel, state, art.evalModel, { onProgress: (p) => progress.push(p) });
    // every frozen weight once (the eval model's are the training model's): the side file less the head
    const frozen = weights - 10 * WIDTH * 4; // (head.bias, 40 bytes, is inside the model)
    assert.equal(progress.at(-1).loaded, frozen);
    assert.ok(progress.every((p, i) => p.total === frozen && (i === 0 || p.loaded >= progress[i - 1].loaded)), 'monotonic, out of the frozen bytes');
    const optimizer = await Optimizer.create(art.optimizerModel, module);
    assert.deepEqual(trainSteps(module, optimizer, x, y), ref.losses);
    optimizer.release();
    module.release();
    state.release();
    await assert.rejects(Module.create(art.trainingModel, await CheckpointState.loadCheckpoint(art.checkpoint), undefined, { onProgress: 5 }), /Module.create: onProgress must be a function/);
  });

  test('a float16 base in external data (weights read through Casts) stays by reference too, from a path and a Blob; it trains as embedded and as its float32 twin', async () => {
    // the 1B-parameter float16 base of tests/bench/big-base.mjs at small scale: before, its float16
    // weights were read and embedded in both models (2 GB each: generation ran out of memory)
    const sub = join(dir, 'half');
    await (await import('node:fs/promises')).mkdir(sub, { recursive: true });
    const make = (name, form) => {
      const r = spawnSync('/usr/bin/python3', [fileURLToPath(new URL('../bench/make_big_base.py', import.meta.url)), join(sub, name), '3', String(WIDTH), form], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return join(sub, name);
    };
    const half = make('half.onnx', '--float16');
    const twin = make('twin.onnx', '--float16-as-float32');
    const halfWeights = (await stat(`${half}.data`)).size;
    const a = await flow(half);
    assert.ok(a.sizes.trainingModel < 64 * 1024 && a.sizes.evalModel < 64 * 1024, `by reference: ${JSON.stringify(a.sizes)} (the side file is ${halfWeights} bytes)`);
    assert.ok(a.byReference.byteLength < 64 * 1024, `exported by reference: ${a.byReference.byteLength} bytes`);
    const b = await flow(half, { keepExternalData: false });
    assert.ok(b.sizes.trainingModel > 0.99 * (halfWeights - 10 * WIDTH * 4), 'embedded: the float16 weights are inside');
    assert.deepEqual(a.losses, b.losses);
    assert.equal(a.evalLoss, b.evalLoss);
    assert.deepEqual(a.exported, b.exported);
    const c = await flow(twin);
    for (const [i, l] of [...a.losses, a.evalLoss].entries()) {
      const want = [...c.losses, c.evalLoss][i];
      assert.ok(Math.abs(l - want) <= 1e-5 * Math.abs(want), `loss ${i}: float16 ${l}, float32 twin ${want}`);
    }
    // from a Blob, only the trained head's bytes are read ahead, not the float16 weights
    const sliced = [];
    class CountingBlob extends Blob {
      slice(start, end) {
        sliced.push(end - start);
        return super.slice(start, end);
      }
    }
    const data = new CountingBlob([await readFile(`${half}.data`)]);
    const fromBlob = await artifacts.generateArtifacts(new Blob([await readFile(half)]), { requiresGrad: HEAD, loss: 'CrossEntropyLoss', optimizer: 'AdamW', externalData: [{ path: 'half.onnx.data', data }] });
    assert.deepEqual(fromBlob.checkpoint, a.art.checkpoint);
    const read = sliced.reduce((x, y) => x + y, 0);
    assert.ok(read < 128 * 1024, `bytes read ahead from the Blob (the head and the biases: 66 KB): ${read} (the float16 weights are ${halfWeights - 10 * WIDTH * 4})`);
  });

  test('a checkpoint holding the frozen weights (frozenParams) loads from a file in place: the heap holds it once', async () => {
    const frozenParams = Array.from({ length: LAYERS }, (_, i) => [`l${i}.weight`, `l${i}.bias`]).flat();
    const art = await artifacts.generateArtifacts(model, { requiresGrad: HEAD, frozenParams, loss: 'CrossEntropyLoss' });
    assert.ok(art.checkpoint.byteLength > weights * 0.99, 'the frozen weights are in the checkpoint');
    const ckpt = join(dir, 'frozen.ckpt');
    await (await import('node:fs/promises')).writeFile(ckpt, art.checkpoint);
    const r = await inWorker({ checkpoint: ckpt });
    assert.equal(r.size, 2 * LAYERS + 2);
    // streamed into the heap and read in place: once (a copy of each tensor would double it)
    const bound = art.checkpoint.byteLength * 1.02 + 4 * MB;
    assert.ok(r.memory <= bound, `wasm Memory after loadCheckpoint: ${(r.memory / MB).toFixed(1)} MB; the checkpoint is ${(art.checkpoint.byteLength / MB).toFixed(1)} MB, bound ${(bound / MB).toFixed(1)}`);
  });

  test('artifactDirectory that is the base folder under another name (a symlink): its side file is left as it is', async () => {
    const fsp = await import('node:fs/promises');
    const link = join(tmpdir(), `webtrain-once-link-${process.pid}`);
    await fsp.rm(link, { force: true });
    await fsp.symlink(dir, link);
    try {
      await artifacts.generateArtifacts(model, { requiresGrad: HEAD, loss: 'CrossEntropyLoss', artifactDirectory: link, prefix: 'linked_' });
      assert.equal((await stat(`${model}.data`)).size, weights);
      assert.ok((await stat(join(dir, 'linked_training_model.onnx'))).size < 64 * 1024);
    } finally {
      await fsp.rm(link, { force: true });
    }
  });

  test('the same artifacts read from another folder use the side file there, not the base they were generated from', async () => {
    const fsp = await import('node:fs/promises');
    const a = await artifacts.generateArtifacts(model, { requiresGrad: HEAD, loss: 'CrossEntropyLoss' });
    const other = join(dir, 'other');
    await fsp.mkdir(other, { recursive: true });
    await fsp.writeFile(join(other, 'training_model.onnx'), a.trainingModel);
    await fsp.writeFile(join(other, 'base.onnx.data'), new Uint8Array(weights)); // a base of zeros
    const state = await CheckpointState.loadCheckpoint(a.checkpoint);
    const module = await Module.create(join(other, 'training_model.onnx'), state);
    // zero weights and biases: every logit is the head's bias, 0: the loss is ln(10)
    const loss = module.runAll(x(), y())[0].data[0];
    module.release();
    state.release();
    assert.ok(Math.abs(loss - Math.log(10)) < 1e-5, `loss ${loss}`);
  });

  test('frozenDtype float16 on a base by reference: every frozen weight is read to be converted (also from a Blob); the same artifacts as embedding', async () => {
    const options = { requiresGrad: HEAD, loss: 'CrossEntropyLoss', frozenDtype: 'float16' };
    const embedded = await artifacts.generateArtifacts(model, { ...options, keepExternalData: false });
    const fromPath = await artifacts.generateArtifacts(model, options);
    const blob = new Blob([await readFile(`${model}.data`)]);
    const fromBlob = await artifacts.generateArtifacts(new Blob([await readFile(model)]), { ...options, externalData: [{ path: 'base.onnx.data', data: blob }] });
    for (const k of ['trainingModel', 'evalModel', 'checkpoint']) {
      assert.deepEqual(fromPath[k], embedded[k], k);
      assert.deepEqual(fromBlob[k], embedded[k], k);
    }
    assert.ok(embedded.trainingModel.byteLength < weights * 0.55, 'float16 inside');
  });
}
