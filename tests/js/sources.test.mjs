// Every entry point that takes a model or checkpoint reads it through js/bytes.js: a path, a
// file: URL (string or URL object), an http URL, bytes of any view, a Blob, a File, a Response.
// Anything else is a TypeError naming what was given; an HTML page or JSON where a model was
// expected (a dev server's fallback page) is refused with a hint; a missing file and an HTTP 404
// are WebtrainErrors naming the path/URL and the status.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CheckpointState, InferenceSession, Module, Optimizer, Tensor, WebtrainError, artifacts, onnxblock } from '../../js/index.js';

const modelPath = new URL('../../demo/models/digits/model.onnx', import.meta.url).pathname;
const PARAMS = ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'];
const options = { requiresGrad: PARAMS, loss: artifacts.LossType.CrossEntropyLoss, optimizer: artifacts.OptimType.AdamW };
const HTML = '<!doctype html>\n<html><head><title>app</title></head><body><div id="app"></div></body></html>\n';

let modelBytes;
let server;
let base;
let dir;

before(async () => {
  modelBytes = new Uint8Array(await readFile(modelPath));
  dir = await mkdtemp(join(tmpdir(), 'webtrain-sources-'));
  // A dev server: the model at /model.onnx, a 404 at /missing.onnx, JSON at /api, and its
  // single-page-app fallback (index.html, status 200) for every other path.
  server = createServer((req, res) => {
    if (req.url === '/model.onnx') res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(modelBytes);
    else if (req.url === '/missing.onnx') res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    else if (req.url === '/api') res.writeHead(200, { 'content-type': 'application/json' }).end('{"error":"no model"}');
    else res.writeHead(200, { 'content-type': 'text/html' }).end(HTML);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(async () => {
  server?.closeAllConnections?.();
  await new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

const copy = (u8) => u8.slice().buffer;
const batch = () => {
  const x = new Tensor('float32', Float32Array.from({ length: 16 * 64 }, (_, i) => (Math.sin(i * 0.71) + 1) / 2), [16, 64]);
  const y = new Tensor('int32', Int32Array.from({ length: 16 }, (_, i) => (i * 7) % 10), [16]);
  return [x, y];
};

/** Trains a few steps from artifacts given in the source forms `wrap` makes; returns the losses. */
async function train(art, wrap) {
  const state = await CheckpointState.loadCheckpoint(wrap.checkpoint(art.checkpoint));
  const module = await Module.create(wrap.model(art.trainingModel), state, wrap.model(art.evalModel));
  const optimizer = await Optimizer.create(wrap.model(art.optimizerModel), module);
  try {
    optimizer.setLearningRate(0.01);
    const [x, y] = batch();
    const losses = [];
    for (let i = 0; i < 4; i++) {
      losses.push(module.runAll(x, y)[0].data[0]);
      optimizer.step();
      module.lazyResetGrad();
    }
    return losses;
  } finally {
    optimizer.release();
    module.release();
    state.release();
  }
}

function assertTrains(losses, what) {
  assert.equal(losses.length, 4, what);
  for (const l of losses) assert.ok(Number.isFinite(l) && l > 0, `${what}: loss ${l}`);
  assert.ok(losses[3] < losses[0], `${what}: the loss did not decrease: ${losses}`);
}

test('a File, a Blob and a Response of the model generate artifacts that train from Files, Blobs and Responses', async () => {
  const forms = {
    File: () => new File([modelBytes], 'model.onnx', { type: 'application/octet-stream' }),
    Blob: () => new Blob([modelBytes]),
    Response: () => new Response(modelBytes),
  };
  const reference = await artifacts.generateArtifacts(modelPath, options);
  for (const [name, make] of Object.entries(forms)) {
    const art = await artifacts.generateArtifacts(make(), options);
    assert.deepEqual(art.trainingModel, reference.trainingModel, `${name}: another training model than from the path`);
    assert.deepEqual(art.checkpoint, reference.checkpoint, `${name}: another checkpoint than from the path`);
    const wrap = {
      File: { model: (b) => new File([b], 'm.onnx'), checkpoint: (b) => new File([b], 'checkpoint') },
      Blob: { model: (b) => new Blob([b]), checkpoint: (b) => new Blob([b]) },
      Response: { model: (b) => new Response(b), checkpoint: (b) => new Response(b) },
    }[name];
    assertTrains(await train(art, wrap), name);
  }
});

test('bytes of any view, a file: URL (string and URL object), an http URL (string and URL object) and a path are the same source', async () => {
  const reference = await artifacts.generateArtifacts(modelBytes, options);
  const sources = {
    ArrayBuffer: copy(modelBytes),
    DataView: new DataView(copy(modelBytes)),
    'Int8Array at an offset': new Int8Array(copy(new Uint8Array([9, 9, 9, 9, ...modelBytes])), 4),
    'file: URL object': pathToFileURL(modelPath),
    'file: URL string': pathToFileURL(modelPath).href,
    'http URL string': `${base}/model.onnx`,
    'http URL object': new URL('/model.onnx', base),
    path: modelPath,
  };
  for (const [name, source] of Object.entries(sources)) {
    const art = await artifacts.generateArtifacts(source, options);
    assert.deepEqual(art.trainingModel, reference.trainingModel, name);
  }
  // The other entry points take the same forms.
  const session = await InferenceSession.create(new Response(modelBytes));
  const out = await session.run({ input: batch()[0] });
  assert.deepEqual(out.output.dims, [16, 10]);
  session.release();
  class Double extends onnxblock.Block {
    constructor() {
      super();
      this._add = new onnxblock.blocks.Add();
    }
    build(output) {
      return this._add(output, output);
    }
  }
  const built = await onnxblock.buildModel(new File([modelBytes], 'model.onnx'), new Double());
  assert.ok(built.bytes.byteLength > modelBytes.byteLength / 2);
  const state = await CheckpointState.loadCheckpoint(new URL(`data:application/octet-stream;base64,${Buffer.from(reference.checkpoint).toString('base64')}`));
  assert.ok(state.parameters.has('fc1.weight'));
  state.release();
});

test('a value that is no source is a TypeError naming what was given, at every entry point', async () => {
  class Foo {}
  const cases = [
    [new Foo(), /got an object of class Foo$/],
    [{ data: modelBytes }, /got a plain object$/],
    [42, /got a number \(42\)$/],
    [null, /got null$/],
    [undefined, /got undefined$/],
    [[1, 2, 3], /got an Array of length 3$/],
  ];
  const art = await artifacts.generateArtifacts(modelPath, options);
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state);
  const entries = {
    'artifacts.generateArtifacts': (s) => artifacts.generateArtifacts(s, options),
    'CheckpointState.loadCheckpoint': (s) => CheckpointState.loadCheckpoint(s),
    'Module.create': (s) => Module.create(s, state),
    'Optimizer.create': (s) => Optimizer.create(s, module),
    'InferenceSession.create': (s) => InferenceSession.create(s),
    'onnxblock.buildModel': (s) => onnxblock.buildModel(s, new onnxblock.blocks.Add()),
  };
  try {
    for (const [entry, call] of Object.entries(entries)) {
      for (const [value, message] of cases) {
        await assert.rejects(call(value), (err) => {
          assert.ok(err instanceof TypeError, `${entry}(${String(value)}): ${err.name}: ${err.message}`);
          assert.match(err.message, /^expected a path, URL, Uint8Array, ArrayBuffer, Blob, File, Response or idb:\/\/ name; got /);
          assert.match(err.message, message);
          return true;
        });
      }
    }
  } finally {
    module.release();
    state.release();
  }
});

test('an HTML page or JSON where a model or checkpoint was expected is refused with a hint', async () => {
  const isPage = (url) => (err) => {
    assert.ok(err instanceof WebtrainError, `${err.name}: ${err.message}`);
    assert.match(err.message, /is an HTML page, not an ONNX model/);
    assert.ok(err.message.includes(`check the URL (HTTP status 200 from ${url})`), err.message);
    return true;
  };
  // A dev server's single-page-app fallback answers 200 with its index.html for a wrong path.
  const url = `${base}/models/typo.onnx`;
  await assert.rejects(artifacts.generateArtifacts(url, options), isPage(url));
  await assert.rejects(CheckpointState.loadCheckpoint(new URL(url)), isPage(url));
  await assert.rejects(InferenceSession.create(url), isPage(url));
  await assert.rejects(InferenceSession.create(await fetch(url)), isPage(url));
  await assert.rejects(artifacts.generateArtifacts(`${base}/api`, options), /'http:\/\/[^']*\/api' is JSON, not an ONNX model or checkpoint \(it starts with '\{"error":"no model"\}'\): check the URL \(HTTP status 200/);
  await assert.rejects(artifacts.generateArtifacts(new File([HTML], 'model.onnx'), options), /^WebtrainError: File 'model\.onnx' is an HTML page, not an ONNX model or checkpoint/);
  const htmlFile = join(dir, 'model.onnx');
  await writeFile(htmlFile, `\ufeff  ${HTML}`);
  const state = await CheckpointState.loadCheckpoint((await artifacts.generateArtifacts(modelBytes, options)).checkpoint);
  await assert.rejects(Module.create(htmlFile, state), /file '[^']*model\.onnx' is an HTML page, not an ONNX model or checkpoint .*: check the path/);
});

test('a missing file and an HTTP 404 are WebtrainErrors naming the path/URL and the status', async () => {
  const state = await CheckpointState.loadCheckpoint((await artifacts.generateArtifacts(modelBytes, options)).checkpoint);
  const missing = join(dir, 'nowhere', 'model.onnx');
  for (const source of [missing, pathToFileURL(missing), pathToFileURL(missing).href]) {
    await assert.rejects(artifacts.generateArtifacts(source, options), (err) => {
      assert.ok(err instanceof WebtrainError, `${err.name}: ${err.message}`);
      assert.equal(err.message, `cannot read '${missing}': no such file (ENOENT)`);
      assert.equal(err.code, 'ENOENT');
      return true;
    });
  }
  const url = `${base}/missing.onnx`;
  for (const call of [() => CheckpointState.loadCheckpoint(url), () => InferenceSession.create(new URL(url)), async () => Module.create(await fetch(url), state)]) {
    await assert.rejects(call(), (err) => {
      assert.ok(err instanceof WebtrainError, `${err.name}: ${err.message}`);
      assert.equal(err.message, `cannot fetch '${url}': HTTP 404 Not Found`);
      assert.equal(err.status, 404);
      return true;
    });
  }
  // A server that is not there, a Response whose body was read, idb:// without the browser entry.
  state.release();
  const gone = createServer();
  await new Promise((resolve) => gone.listen(0, '127.0.0.1', resolve));
  const goneUrl = `http://127.0.0.1:${gone.address().port}/model.onnx`;
  await new Promise((resolve) => gone.close(resolve));
  await assert.rejects(InferenceSession.create(goneUrl), (err) => err instanceof WebtrainError && err.message.startsWith(`cannot fetch '${goneUrl}': `) && /ECONNREFUSED/.test(err.message));
  const used = new Response(modelBytes);
  await used.arrayBuffer();
  await assert.rejects(InferenceSession.create(used), /^WebtrainError: cannot read a Response: its body was already read$/);
  await assert.rejects(CheckpointState.loadCheckpoint('idb://digits/checkpoint'), /^WebtrainError: 'idb:\/\/digits\/checkpoint': idb:\/\/ locations need IndexedDB and the browser entry/);
});
