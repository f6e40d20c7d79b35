// Weights inside the .onnx held once (js/inside.js): a base whose weights are inside
// its model file (no side file: how torch.onnx.export saves anything under 2 GB), made by
// tests/bench/make_big_base.py --inside (a few tens of MB), goes through the README's flow from a
// path, a Blob, bytes and a URL. The training and eval models refer to the model file itself at
// its raw_data offsets: a few KB each; generation reads none of the frozen weights; the heap holds
// them once (training and eval models share them); losses are bit-identical to its side-file twin
// (make_big_base.py without --inside: the same bytes in base.onnx.data) and to keepExternalData:
// false; the artifactDirectory folder (the base linked beside the artifacts) loads in webtrain and
// its eval model in onnxruntime-node. Bad input: a base changed since generation (size, or the same
// size with other tensors), a truncated one, a missing one: errors naming the file and the tensor.
// And the scan itself on randomly damaged models: a skeleton the core reads, or the model read
// whole (the core says what is wrong), never a wrong skeleton.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { artifacts, CheckpointState, Module, Tensor, WebtrainError, init } from '../../js/index.js';
import { baseFlow, folderEvalMatchesOrt } from './base-flow.mjs';
import { INSIDE_MIN, scanModel } from '../../js/inside.js';

const MB = 2 ** 20;
const LAYERS = 3;
const WIDTH = 2048; // 3 x 2048^2 floats: 48 MiB of frozen weights (referenced from 32 MiB on: INSIDE_BY_REFERENCE)
const BATCH = 4;
const HEAD = ['head.weight', 'head.bias'];
const OPTIONS = { requiresGrad: HEAD, loss: 'CrossEntropyLoss', optimizer: 'AdamW' };

const x = () => new Tensor('float32', Float32Array.from({ length: BATCH * WIDTH }, (_, i) => Math.sin(i * 0.37)), [BATCH, WIDTH]);
const y = () => new Tensor('int32', Int32Array.from({ length: BATCH }, (_, i) => i % 10), [BATCH]);

/** The README's flow on `model`: 3 train steps, an eval step; wasm Memory and malloc'd bytes. */
const flow = (model, options = {}, moduleOptions = {}) => baseFlow(model, { options: { ...OPTIONS, ...options }, moduleOptions, x, y });

const make = (out, ...args) => {
  const r = spawnSync('/usr/bin/python3', [fileURLToPath(new URL('../bench/make_big_base.py', import.meta.url)), out, String(LAYERS), String(WIDTH), ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return out;
};

if (!isMainThread) {
  // a fresh wasm instance: its heap holds this flow only
  const source = workerData.bytes ? new Uint8Array(await readFile(workerData.model)) : workerData.model;
  const { art, ...r } = await flow(source);
  parentPort.postMessage(r);
} else {
  const dir = await mkdtemp(join(tmpdir(), 'webtrain-inside-'));
  const model = make(join(dir, 'base.onnx'), '--inside');
  const twin = make(join(dir, 'twin.onnx')); // the same weights in twin.onnx.data
  const size = (await stat(model)).size;
  const weights = (await stat(`${twin}.data`)).size;
  const frozen = weights - 10 * WIDTH * 4; // all but the head's weight (its bias is below INSIDE_MIN)
  const inWorker = (data) => new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: data });
    w.once('message', resolve);
    w.once('error', reject);
  });
  test.after(() => rm(dir, { recursive: true, force: true }));

  test('from a path: a few KB of models, no frozen weight read to generate them, the heap holds them once', async () => {
    assert.ok(size > weights, 'the weights are inside base.onnx');
    for (const data of [{ model }, { model, bytes: true }]) {
      const r = await inWorker(data);
      assert.ok(r.sizes.trainingModel < 64 * 1024 && r.sizes.evalModel < 64 * 1024, JSON.stringify(r.sizes));
      // generation parsed the skeleton and read the head (80 KB): not the 48 MiB of frozen weights.
      // The bound is the core's first megabytes, the 1 MiB window the model streams through
      // (js/inside.js) and the models generated
      assert.ok(r.generated < 6 * MB, `wasm Memory after generateArtifacts: ${(r.generated / MB).toFixed(1)} MB`);
      // one copy of the frozen weights in the heap, shared by the training and eval models (two
      // would be 48 MiB more); from bytes too (the bytes are read into the heap, not copied first).
      // Beside them only the GEMM's packed panels of this small base (all its weights, within the
      // 64 MiB a module may pack: memoryStats().packed), a cache, not a second parsed copy.
      assert.ok(r.packed === 0 || (r.packed > 0.99 * frozen && r.packed <= 64 * MB), `packed ${(r.packed / MB).toFixed(1)} MB`);
      const bound = frozen + r.packed + 4 * MB;
      assert.ok(r.mallocInUse <= bound, `${data.bytes ? 'bytes' : 'path'}: malloc'd after training ${(r.mallocInUse / MB).toFixed(1)} MB; frozen weights ${(frozen / MB).toFixed(1)} MB, packed ${(r.packed / MB).toFixed(1)} MB`);
      assert.ok(r.memory <= weights + r.packed + 8 * MB, `wasm Memory after training ${(r.memory / MB).toFixed(1)} MB`);
    }
  });

  test('bit for bit: the same as its side-file twin, as keepExternalData: false, and from bytes, a Blob and a URL (onProgress: the frozen bytes once)', async (t) => {
    const ref = await flow(twin);
    const a = await flow(model);
    const embedded = await flow(model, { keepExternalData: false });
    assert.ok(embedded.sizes.trainingModel > 0.99 * weights, 'keepExternalData: false embeds the weights');
    const bytes = await flow(new Uint8Array(await readFile(model)));
    const sliced = [];
    class CountingBlob extends Blob {
      slice(start, end) {
        sliced.push(end - start);
        return super.slice(start, end);
      }
    }
    const counting = new CountingBlob([await readFile(model)]);
    await artifacts.generateArtifacts(counting, OPTIONS);
    const generating = sliced.splice(0).reduce((p, q) => p + q, 0);
    const blob = await flow(counting);
    const server = createServer((req, res) => {
      const name = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1));
      stat(join(dir, name)).then((st) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': st.size });
        createReadStream(join(dir, name)).pipe(res);
      }, () => res.writeHead(404).end());
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => server.close());
    const progress = [];
    const url = await flow(`http://127.0.0.1:${server.address().port}/base.onnx`, {}, { onProgress: (p) => progress.push(p) });
    for (const [what, r] of Object.entries({ a, embedded, bytes, blob, url })) {
      assert.deepEqual(r.losses, ref.losses, what);
      assert.equal(r.evalLoss, ref.evalLoss, what);
      assert.deepEqual(r.art.checkpoint, ref.art.checkpoint, what);
    }
    assert.ok(ref.losses[2] < ref.losses[0], String(ref.losses));
    // from the Blob: generation reads the parts between the weights (64 KiB reads) and the head,
    // never the frozen weights; the whole flow reads them once more (into the heap)
    assert.ok(generating < 2 * MB, `bytes read from the Blob to generate: ${generating} (the frozen weights are ${frozen})`);
    const read = sliced.reduce((p, q) => p + q, 0);
    assert.ok(read < frozen + 4 * MB, `bytes read from the Blob by the flow: ${read} (the frozen weights are ${frozen})`);
    assert.equal(progress.at(-1).loaded, frozen);
    assert.ok(progress.every((p, i) => p.total === frozen && (i === 0 || p.loaded >= progress[i - 1].loaded)));
  });

  test('artifactDirectory: the base is linked beside the artifacts; the folder loads in webtrain and its eval model in onnxruntime-node', async () => {
    const out = join(dir, 'artifacts');
    const art = await artifacts.generateArtifacts(model, { ...OPTIONS, artifactDirectory: out });
    assert.equal((await stat(join(out, 'base.onnx'))).ino, (await stat(model)).ino, 'a hard link, not a copy');
    await folderEvalMatchesOrt(out, art.checkpoint, x, y);
    // from bytes: the model file is written beside the artifacts under the name they use
    const fromBytes = join(dir, 'from-bytes');
    await artifacts.generateArtifacts(new Uint8Array(await readFile(model)), { ...OPTIONS, artifactDirectory: fromBytes });
    assert.deepEqual(await readFile(join(fromBytes, 'model.onnx')), await readFile(model));
    // a base named like an artifact would be overwritten by it: refused before anything is written
    const clash = join(dir, 'clash');
    await mkdir(clash, { recursive: true });
    await copyFile(model, join(clash, 'training_model.onnx'));
    await assert.rejects(artifacts.generateArtifacts(join(clash, 'training_model.onnx'), { ...OPTIONS, artifactDirectory: join(dir, 'clash-out') }), /the base model file 'training_model\.onnx', which the artifacts refer to for its weights, has the same name as an artifact written there: rename the base file or give a prefix/);
  });

  test('the CLI: generate-artifacts links the base beside the artifacts; export-inference from that folder', async () => {
    const out = join(dir, 'cli');
    const bin = fileURLToPath(new URL('../../js/bin/webtrain.mjs', import.meta.url));
    const cli = (args) => spawnSync(process.execPath, [bin, ...args, '-q'], { encoding: 'utf8' });
    const gen = cli(['generate-artifacts', model, '--requires-grad', 'head.weight,head.bias', '--loss', 'CrossEntropyLoss', '--optimizer', 'AdamW', '-o', out]);
    assert.equal(gen.status, 0, gen.stderr);
    assert.equal((await stat(join(out, 'base.onnx'))).ino, (await stat(model)).ino);
    assert.ok((await stat(join(out, 'training_model.onnx'))).size < 64 * 1024);
    const exp = cli(['export-inference', '--artifacts', out, '--outputs', 'logits', '-o', join(out, 'inference.onnx')]);
    assert.equal(exp.status, 0, exp.stderr);
    assert.ok((await stat(join(out, 'inference.onnx'))).size > weights, 'exported with the weights inside');
  });

  test('a base changed since generation, truncated or missing: errors naming the file (and the tensor)', async () => {
    const sub = join(dir, 'changed');
    await mkdir(sub, { recursive: true });
    const base = join(sub, 'base.onnx');
    await copyFile(model, base);
    const art = await artifacts.generateArtifacts(base, OPTIONS);
    const create = async () => Module.create(art.trainingModel, await CheckpointState.loadCheckpoint(art.checkpoint), art.evalModel);
    // the same size, another tensor name: the fingerprint differs
    const bytes = new Uint8Array(await readFile(model));
    const at = Buffer.from(bytes).indexOf('l1.weight');
    bytes[at + 1] = '9'.charCodeAt(0);
    await writeFile(base, bytes);
    await assert.rejects(create(), /the base model file '.*base\.onnx', the model file the artifacts refer to as 'base\.onnx' for its weights, is not the one they were generated from \(its tensors' names, shapes or places differ: fingerprint [0-9a-f]{8}, generated from [0-9a-f]{8}\): it changed since; generate the artifacts again from it/);
    // another size (re-exported wider, or cut short)
    await truncate(base, size - 100);
    await assert.rejects(create(), new RegExp(`is not the one they were generated from \\(${size - 100} bytes, generated from ${size}\\)`));
    // missing
    await rm(base);
    await assert.rejects(create(), /tensor 'l0\.weight': cannot read the base model file '.*changed\/base\.onnx': no such file \(the artifacts refer to it for the base's weights\): put it back or pass it with externalData: \[\{ path: 'base\.onnx', data \}\]/);
    // generation from a truncated base names the tensor whose bytes are past the end
    await copyFile(model, base);
    await truncate(base, size - 30000); // inside head.weight's 81920 bytes
    await assert.rejects(artifacts.generateArtifacts(base, OPTIONS), (err) => err instanceof WebtrainError && /file '.*base\.onnx': tensor 'head\.weight' has 81920 bytes at offset \d+, past the file's end \(\d+ bytes\): the file is truncated/.test(err.message));
    // a copy of the models' bytes does not know its base given as bytes: it says what to pass
    const fromBytes = await artifacts.generateArtifacts(new Uint8Array(await readFile(model)), OPTIONS);
    await assert.rejects(Module.create(new Uint8Array(fromBytes.trainingModel), await CheckpointState.loadCheckpoint(fromBytes.checkpoint)), /external file 'model\.onnx' is not available: .*externalData: \[\{ path: 'model\.onnx', data \}\]/);
    const state = await CheckpointState.loadCheckpoint(fromBytes.checkpoint);
    const module = await Module.create(new Uint8Array(fromBytes.trainingModel), state, undefined, { externalData: [{ path: 'model.onnx', data: model }] });
    const loss = module.runAll(x(), y())[0].data[0];
    assert.ok(Number.isFinite(loss));
    module.release();
    // a base given as a File is known by its content (a handle, what worker() sends back): copies find it
    const file = new File([await readFile(model)], 'picked.onnx');
    const fromFile = await artifacts.generateArtifacts(file, OPTIONS);
    const copied = await Module.create(new Uint8Array(fromFile.trainingModel), state, new Uint8Array(fromFile.evalModel));
    assert.equal(copied.runAll(x(), y())[0].data[0], loss);
    copied.release();
    state.release();
  });

  test('weights embedded in both the training and eval models (frozenDtype float16, keepExternalData: false) are held once: the eval model borrows identical ones', async () => {
    const core = await init();
    for (const options of [{ frozenDtype: 'float16' }, { keepExternalData: false }]) {
      const art = await artifacts.generateArtifacts(model, { ...OPTIONS, ...options });
      const held = options.frozenDtype ? frozen / 2 : frozen; // the frozen weights as the models hold them
      assert.ok(art.trainingModel.byteLength > held && art.evalModel.byteLength > held, 'embedded in both');
      const state = await CheckpointState.loadCheckpoint(art.checkpoint);
      const create = async (evalModel) => {
        const before = core.heapStats().mallocInUse;
        const module = await Module.create(art.trainingModel, state, evalModel);
        const grown = core.heapStats().mallocInUse - before;
        const losses = [module.train().runAll(x(), y())[0].data[0], module.eval().runAll(x(), y())[0].data[0]];
        module.release();
        return { grown, losses };
      };
      const once = await create(art.evalModel);
      assert.ok(once.grown < held + 2 * MB, `${JSON.stringify(options)}: Module.create holds ${(once.grown / MB).toFixed(1)} MB; the weights are ${(held / MB).toFixed(1)} MB`);
      assert.equal(once.losses[1], once.losses[0], 'eval before any step: the training forward');
      // an eval model whose l1.weight differs keeps its own copy of it (and computes with it)
      const changed = new Uint8Array(art.evalModel);
      const raw = Buffer.from(changed).indexOf(Buffer.from('l1.weight\x4a', 'latin1')) + 4096; // the initializer's name, then its raw_data (tag 0x4a)
      for (let k = 0; k < 64; k++) changed[raw + k] ^= 0x40;
      const twice = await create(changed);
      const one = WIDTH * WIDTH * (options.frozenDtype ? 2 : 4);
      assert.ok(twice.grown > once.grown + one * 0.9 && twice.grown < once.grown + one + 2 * MB, `${(twice.grown / MB).toFixed(1)} MB with one weight that differs`);
      assert.notEqual(twice.losses[1], twice.losses[0]);
      assert.equal(twice.losses[0], once.losses[0]);
      state.release();
    }
  });

  test('a small model (its weights inside under 32 MiB) keeps self-contained artifacts unless keepExternalData: true', async () => {
    const sub = join(dir, 'small');
    await mkdir(sub, { recursive: true });
    const r = spawnSync('/usr/bin/python3', [fileURLToPath(new URL('../bench/make_big_base.py', import.meta.url)), join(sub, 'small.onnx'), '2', '512', '--inside'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const small = join(sub, 'small.onnx');
    const weightsIn = 2 * 512 * 512 * 4;
    const plain = await artifacts.generateArtifacts(small, OPTIONS);
    assert.ok(plain.trainingModel.byteLength > weightsIn && plain.evalModel.byteLength > weightsIn, 'the weights inside both models, as before');
    assert.ok(!Buffer.from(plain.trainingModel).includes('webtrain.base:'), 'no reference to the base file');
    const forced = await artifacts.generateArtifacts(small, { ...OPTIONS, keepExternalData: true });
    assert.ok(forced.trainingModel.byteLength < 16 * 1024 && forced.evalModel.byteLength < 16 * 1024, `${forced.trainingModel.byteLength} / ${forced.evalModel.byteLength}`);
    assert.deepEqual(forced.checkpoint, plain.checkpoint);
    const losses = [];
    for (const art of [plain, forced]) {
      const state = await CheckpointState.loadCheckpoint(art.checkpoint);
      const module = await Module.create(art.trainingModel, state, art.evalModel);
      const xs = new Tensor('float32', Float32Array.from({ length: 2 * 512 }, (_, i) => Math.cos(i)), [2, 512]);
      losses.push(module.runAll(xs, new Tensor('int32', Int32Array.from([3, 7]), [2]))[0].data[0]);
      module.release();
      state.release();
    }
    assert.equal(losses[1], losses[0]);
  });

  test('the scan on damaged models: a skeleton listing the same tensors the core reads there, or the model read whole', async () => {
    // a small model with weights inside (2 x 64^2 floats: 16 KiB each)
    const sub = join(dir, 'fuzz');
    await mkdir(sub, { recursive: true });
    const s = spawnSync('/usr/bin/python3', [fileURLToPath(new URL('../bench/make_big_base.py', import.meta.url)), join(sub, 'm.onnx'), '2', '64', '--inside'], { encoding: 'utf8' });
    assert.equal(s.status, 0, s.stderr);
    const good = new Uint8Array(await readFile(join(sub, 'm.onnx')));
    const core = await init();
    const list = (bytes) => {
      const m = core.m;
      const l = core.withBytes(bytes, (p, n) => m._wtw_external_list(p, n));
      if (!l) return null;
      try {
        return Array.from({ length: m._wtw_external_count(l) }, (_, i) => `${core.string(m._wtw_external_tensor(l, i))}@${m._wtw_external_offset(l, i)}+${m._wtw_external_length(l, i)}`);
      } finally {
        m._wtw_external_list_free(l);
      }
    };
    const base = await scanModel(good, { force: true });
    assert.equal(base.inside.refs.length, 2, 'the two 64 x 64 weights');
    let seed = 17;
    const rand = (n) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    let scanned = 0;
    for (let round = 0; round < 400; round++) {
      const b = good.slice(0, rand(3) === 0 ? rand(good.length) + 1 : good.length);
      for (let k = rand(4) + 1; k > 0; k--) b[rand(b.length)] = rand(256);
      let r;
      try {
        r = await scanModel(b, { force: true });
      } catch (err) {
        // only the errors the scan means to give (a tensor past the end of its file)
        assert.ok(err instanceof WebtrainError && /past the file's end/.test(err.message), `round ${round}: ${err.stack}`);
        continue;
      }
      if (!r.inside) {
        assert.ok(r.bytes === b, `round ${round}: no reference, the model as it is`);
        continue;
      }
      scanned++;
      // the core reads the skeleton's references as the scan made them, inside the file, each
      // the bytes the original holds there
      const listed = list(r.bytes);
      if (listed === null) continue; // the skeleton is as broken as the model (the core says so)
      const mine = r.inside.refs.map((q) => `${q.tensor}@${q.offset}+${q.length}`);
      assert.deepEqual(listed.filter((l) => mine.includes(l)), mine, `round ${round}`);
      for (const q of r.inside.refs) assert.ok(q.offset + q.length <= b.length && q.length >= INSIDE_MIN, `round ${round}`);
    }
    assert.ok(scanned > 50, `${scanned} damaged models still scanned`);
  });
}
