// Symbolic dimensions stay symbolic while generating: a decoder exported with dynamic
// [batch, seq] gets artifacts although its attention scores at generation's stand-in sizes
// (~1000 x 2 x 1000 x 1000 floats) would be past wasm32's 2 GiB for one value, then trains at
// real shapes, two sequence lengths in one module; a real shape past that limit still fails up
// front when its plan is built, with the bytes, and training goes on after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { artifacts, CheckpointState, Module, Optimizer, Tensor } from '../../js/index.js';

// tests/bench/make_smollm.py --layers 2 --hidden 16 --heads 2 --kv-heads 1 --mlp 24 --vocab 32
// --max-seq 64 --inline: the Llama-style model of the LoRA golden case, with dynamic batch and seq
const model = new URL('../data/tiny-decoder.onnx', import.meta.url);
const VOCAB = 32;

const batchOf = (b, s) => {
  const ids = BigInt64Array.from({ length: b * s }, (_, i) => BigInt((i * 7 + 3) % VOCAB));
  const next = BigInt64Array.from({ length: b * s }, (_, i) => ids[i % s === s - 1 ? i - s + 1 : i + 1]);
  return [new Tensor('int64', ids, [b, s]), new Tensor('int64', next, [b, s])];
};

test('a decoder with dynamic [batch, seq] generates LoRA artifacts and trains at two sequence lengths', async () => {
  const art = await artifacts.generateArtifacts(model, {
    lora: { rank: 4, alpha: 8, targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] },
    loss: 'CrossEntropyLoss', optimizer: 'AdamW',
  });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  for (const [b, s] of [[2, 5], [1, 9]]) {
    const [x, y] = batchOf(b, s);
    const losses = [];
    for (let i = 0; i < 4; i++) {
      losses.push(module.train().runAll(x, y)[0].data[0]);
      optimizer.step();
      module.lazyResetGrad();
    }
    assert.ok(losses.every(Number.isFinite), `[${b}, ${s}]: ${losses}`);
    assert.ok(losses[3] < losses[0], `[${b}, ${s}]: the loss falls: ${losses}`);
    const evalLoss = module.eval().runAll(x, y)[0].data[0];
    assert.ok(Number.isFinite(evalLoss));
  }
  // [70000, 64]: the attention scores [70000, 2, 64, 64] are 2293760000 bytes, past 2 GiB
  const [bx, by] = batchOf(70000, 64);
  assert.throws(() => module.train().runAll(bx, by),
    /output '[^']+' \(float \[70000,2,64,64\]\) would need 2293760000 bytes: more than this build can address/);
  const [x, y] = batchOf(2, 5);
  assert.ok(Number.isFinite(module.train().runAll(x, y)[0].data[0]), 'trains on after the error');
  optimizer.release();
  module.release();
  state.release();
});
