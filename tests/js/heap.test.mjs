// Peak wasm heap: training the MLP golden model (784-128-10, AdamW) takes at most what
// its parameters, gradients, optimizer moments and one activation arena need, plus 256 KiB
// and two batches of inputs; the training and eval models share that arena; loading a
// checkpoint leaves no checkpoint-sized hole; the wasm Memory starts small and tracks malloc's use.
// The training runs in a worker thread: a fresh wasm instance, whose heap holds nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { artifacts, CheckpointState, Module, Optimizer, Tensor, init } from '../../js/index.js';

const dir = new URL('../golden/cases/mlp_ce_adamw/', import.meta.url);
const MB = 1 << 20;

async function bin(name, Type) {
  const b = await readFile(new URL(name, dir));
  return new Type(b.buffer, b.byteOffset, b.byteLength / Type.BYTES_PER_ELEMENT);
}

/** In the worker: load, train, eval, train again; heap figures at each stage. */
async function measure({ art, batch }) {
  const core = await init();
  const at = {};
  const snap = (name) => {
    at[name] = core.heapStats();
  };
  snap('start');
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  snap('loaded');
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  snap('created');
  // the case's batch of 8, repeated up to `batch` rows
  const x8 = await bin('step0__input.bin', Float32Array);
  const y8 = await bin('step0__labels.bin', Int32Array);
  const x = new Tensor('float32', Float32Array.from({ length: batch * 784 }, (_, i) => x8[i % x8.length]), [batch, 784]);
  const y = new Tensor('int32', Int32Array.from({ length: batch }, (_, i) => y8[i % y8.length]), [batch]);
  const losses = [];
  const step = () => {
    losses.push(module.train().runAll(x, y)[0].data[0]);
    optimizer.step();
    module.lazyResetGrad();
  };
  for (let i = 0; i < 5; i++) step();
  snap('trained');
  const memTrain = module.memoryStats();
  module.eval().runAll(x, y);
  snap('evaluated');
  step();
  snap('end');
  const mem = module.memoryStats();
  // Two steps that accumulate (no lazyResetGrad between): their plan keeps the gradients in the
  // arena, to be added to the buffers.
  module.train().runAll(x, y);
  module.runAll(x, y);
  const memAccum = module.memoryStats();
  optimizer.release();
  module.release();
  state.release();
  return { at, memTrain, mem, memAccum, losses, inputBytes: x.data.byteLength + y.data.byteLength };
}

if (!isMainThread) {
  parentPort.postMessage(await measure(workerData));
} else {
  const run = async (batch) => {
    const art = await artifacts.generateArtifacts(new URL('model.onnx', dir), { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
    return new Promise((resolve, reject) => {
      const w = new Worker(new URL(import.meta.url), { workerData: { art, batch } });
      w.once('message', resolve);
      w.once('error', reject);
    });
  };

  test('training the MLP stays within parameters + gradients + moments + one arena + fixed overhead', async () => {
    const { at, mem, losses, inputBytes } = await run(64);
    assert.ok(losses.every(Number.isFinite) && losses.at(-1) < losses[0], `the model trains: ${losses}`);
    const P = 4 * (784 * 128 + 128 + 128 * 10 + 10);
    assert.equal(mem.params, P);
    assert.equal(mem.grads, P);
    assert.equal(mem.moments, 2 * P, 'AdamW: two moments per trainable parameter');
    assert.ok(mem.arena > 0 && mem.arena >= mem.livePeakTrain && mem.arena >= mem.livePeakEval);
    // The offline layout reaches the live peak here (no fragmentation to speak of).
    assert.ok(mem.arena <= 1.05 * mem.livePeakTrain, `arena ${mem.arena} vs live peak ${mem.livePeakTrain}`);
    // saved: the batch (fc1's weight gradient reads it) + the arena values the backward pass reads
    const batchBytes = 4 * 64 * 784;
    assert.ok(mem.saved > batchBytes && mem.saved <= batchBytes + mem.livePeakTrain, `saved ${mem.saved}`);
    // With lazyResetGrad before every step, gradients are written straight into their buffers:
    // no parameter-sized temporary (fc1.weight's gradient alone is 4 x 784 x 128 bytes).
    assert.ok(mem.arena < 4 * 784 * 128 / 2, `arena ${mem.arena}`);
    // Graphs, plans, the input staging buffer: 3 small models' worth.
    const fixed = 256 * 1024 + 2 * inputBytes;
    const bound = mem.params + mem.grads + mem.moments + mem.arena;
    const used = at.end.mallocPeak - at.start.mallocInUse;
    assert.ok(used <= bound + fixed, `malloc peak ${(used / MB).toFixed(2)} MB > ${(bound / MB).toFixed(2)} MB (state + arena) + ${(fixed / MB).toFixed(2)} MB`);
    assert.ok(at.end.mallocPeak - at.end.mallocInUse < 128 * 1024, 'no large free chunk left behind (transient copies)');
  });

  test('the eval model shares the training model\'s arena: an eval step allocates nothing', async () => {
    const { at, memTrain, mem, memAccum } = await run(64);
    assert.equal(mem.arena, memTrain.arena, 'the arena did not grow for the eval plan');
    assert.ok(mem.livePeakEval > 0 && mem.livePeakEval < mem.livePeakTrain);
    assert.ok(at.evaluated.mallocPeak - at.trained.mallocPeak < 64 * 1024, `eval step grew the heap by ${at.evaluated.mallocPeak - at.trained.mallocPeak} bytes`);
    assert.equal(at.end.mallocPeak, at.evaluated.mallocPeak, 'training again after eval allocates nothing');
    assert.ok(memAccum.arena >= 4 * 784 * 128, 'accumulating steps keep their gradients in the arena');
  });

  test('loading a checkpoint leaves no checkpoint-sized hole; the Memory tracks malloc', async () => {
    const { at, mem } = await run(8);
    const loadedUse = at.loaded.mallocInUse - at.start.mallocInUse;
    assert.ok(loadedUse >= mem.params + mem.grads);
    assert.ok(at.loaded.mallocPeak - at.loaded.mallocInUse < 64 * 1024, `the checkpoint copy left ${at.loaded.mallocPeak - at.loaded.mallocInUse} bytes free behind the state`);
    // Starts just above static data + stack, grows by what malloc asks for plus <= 1 MB (and 64 KB pages).
    assert.ok(at.start.memory <= 8 * MB, `initial Memory ${at.start.memory}`);
    assert.ok(at.end.memory <= at.end.heapTop + MB + 65536, `Memory ${at.end.memory} vs heap top ${at.end.heapTop}`);
  });
}
