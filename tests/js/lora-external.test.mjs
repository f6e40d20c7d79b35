// LoRA on a base saved with external data: the base stays there, read into the heap
// once by Module.create (the checkpoint holds the adapters only), trains, and its adapters saved
// on their own load back into a module over the same base only: another base's weights (same
// names and shapes, other values) are told apart by the fingerprint of the weights read from
// external data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { artifacts, CheckpointState, Module, Optimizer, Tensor } from '../../js/index.js';

const base = fileURLToPath(new URL('../data/external/mlp.onnx', import.meta.url)); // X[N,4] -> W1 [4,8] ... -> [N,3]
const LORA = { lora: { rank: 2, alpha: 4, targets: ['W1', 'W2'] }, loss: 'CrossEntropyLoss', optimizer: 'AdamW' };
const X = new Tensor('float32', Float32Array.from({ length: 24 }, (_, i) => Math.sin(i)), [6, 4]);
const Y = new Tensor('int64', BigInt64Array.from({ length: 6 }, (_, i) => BigInt(i % 3)), [6]);

async function open(model) {
  const art = await artifacts.generateArtifacts(model, LORA);
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  return { art, state, module };
}

test('LoRA on a base in external data: the checkpoint holds the adapters; their fingerprint knows the base', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'webtrain-lora-ext-'));
  const opened = [];
  try {
    const a = await open(base);
    opened.push(a);
    const names = [...a.state.parameters.keys()];
    assert.deepEqual(names.sort(), ['W1.lora_A', 'W1.lora_B', 'W2.lora_A', 'W2.lora_B']);
    assert.ok(a.art.checkpoint.byteLength < 2048, `${a.art.checkpoint.byteLength} bytes`);
    const optimizer = await Optimizer.create(a.art.optimizerModel, a.module);
    optimizer.setLearningRate(5e-2);
    const losses = [];
    for (let k = 0; k < 5; k++) {
      losses.push(a.module.train().runAll(X, Y)[0].data[0]);
      optimizer.step();
      a.module.lazyResetGrad();
    }
    optimizer.release();
    assert.ok(losses[4] < losses[0], `${losses}`);
    const adapters = await CheckpointState.saveCheckpoint(a.state, null, { trainableOnly: true });
    // the same base: loads, and gives the trained module's eval loss
    const b = await open(base);
    opened.push(b);
    await b.state.loadParameters(adapters);
    assert.deepEqual(b.module.eval().runAll(X, Y)[0].data, a.module.eval().runAll(X, Y)[0].data);
    // another base: W2's values changed in its side file, names and shapes the same
    await copyFile(base, join(dir, 'mlp.onnx'));
    const side = await readFile(`${base}.data`);
    side[side.length - 20] ^= 0x40;
    await writeFile(join(dir, 'mlp.onnx.data'), side);
    const c = await open(join(dir, 'mlp.onnx'));
    opened.push(c);
    await assert.rejects(c.state.loadParameters(adapters),
      /trained on another base model: the fingerprint of the weights its module read from external data is [0-9a-f]{16}, this module's [0-9a-f]{16}/);
    // a state without a module knows no such base: the adapters load (checked again by no one)
    const bare = await CheckpointState.loadCheckpoint(c.art.checkpoint);
    await bare.loadParameters(adapters);
    bare.release();
  } finally {
    for (const o of opened.reverse()) {
      o.module.release();
      o.state.release();
    }
    await rm(dir, { recursive: true, force: true });
  }
});

test('LoRA from a Blob: the base weights are not read ahead (nothing of the base is read to generate)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'webtrain-lora-blob-'));
  try {
    // 2 x Linear(640) + ReLU under a Linear(640, 10) head: 1.6 MB per base weight (Gemm, transB)
    const model = join(dir, 'base.onnx');
    const made = spawnSync('/usr/bin/python3', [fileURLToPath(new URL('../bench/make_big_base.py', import.meta.url)), model, '2', '640'], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    const sliced = [];
    class CountingBlob extends Blob {
      slice(start, end) {
        sliced.push(end - start);
        return super.slice(start, end);
      }
    }
    const data = new CountingBlob([await readFile(`${model}.data`)]);
    const art = await artifacts.generateArtifacts(new Blob([await readFile(model)]), {
      lora: { rank: 4, targets: ['l0.weight', 'l1.weight'] }, loss: 'CrossEntropyLoss', optimizer: 'AdamW',
      externalData: [{ path: 'base.onnx.data', data }],
    });
    const read = sliced.reduce((a, b) => a + b, 0);
    const weights = (await stat(`${model}.data`)).size;
    assert.ok(read < 64 * 1024, `bytes read ahead from the Blob: ${read} of ${weights} (the biases and head: 28 KB)`);
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const trained = [...state.parameters].filter(([, p]) => p.requiresGrad).map(([n]) => n).sort();
    assert.deepEqual(trained, ['l0.weight.lora_A', 'l0.weight.lora_B', 'l1.weight.lora_A', 'l1.weight.lora_B']);
    assert.ok(!state.parameters.has('l0.weight') && !state.parameters.has('l1.weight'), 'the base stays by reference');
    state.release();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
