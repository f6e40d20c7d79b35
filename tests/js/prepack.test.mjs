// Frozen weights packed once for the GEMM (src/backend/cpu/gemm_prepack.h): a module packs the frozen
// weights its GEMMs read after its first train step (memoryStats().packed: all of them when they fit in 64 MiB, else none) and
// reads those panels instead of packing them in every step. Results never depend on it: a frozen
// weight written through the state (parameters.set, loadParameters ...) is packed again before
// the next step reads it (by any module over that state), so a module that packed the old weight
// gives the bits of a module that never packed anything; float32 and float16 frozen weights alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { artifacts, CheckpointState, Module, Optimizer, Tensor } from '../../js/index.js';

const LAYERS = 3, WIDTH = 384, BATCH = 16; // 384 x 384 weights: over the 64K-element threshold
const FROZEN = Array.from({ length: LAYERS }, (_, i) => `l${i}.weight`);
const x = (s) => new Tensor('float32', Float32Array.from({ length: BATCH * WIDTH }, (_, i) => Math.sin(i * 0.37 + s)), [BATCH, WIDTH]);
const y = () => new Tensor('int32', Int32Array.from({ length: BATCH }, (_, i) => i % 10), [BATCH]);

const dir = await mkdtemp(join(tmpdir(), 'webtrain-prepack-'));
test.after(() => rm(dir, { recursive: true, force: true }));
function base(name, ...flags) {
  const model = join(dir, name);
  const made = spawnSync('/usr/bin/python3', [fileURLToPath(new URL('../bench/make_big_base.py', import.meta.url)), model, String(LAYERS), String(WIDTH), ...flags], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  return model;
}

for (const [form, flags, options] of [['float32', [], {}], ['float16', ['--float16'], { frozenDtype: 'float16' }]]) {
  test(`${form} frozen weights in the checkpoint: packed once, packed again after they are written`, async () => {
    const art = await artifacts.generateArtifacts(base(`base-${form}.onnx`, ...flags), {
      requiresGrad: ['head.weight', 'head.bias'], frozenParams: FROZEN, keepExternalData: false,
      loss: 'CrossEntropyLoss', optimizer: 'AdamW', ...options,
    });
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await Module.create(art.trainingModel, state, art.evalModel);
    const optimizer = await Optimizer.create(art.optimizerModel, module);
    try {
      assert.equal(module.memoryStats().packed, 0, 'nothing packed before the first step');
      for (let s = 0; s < 3; s++) {
        module.train().runAll(x(s), y());
        optimizer.step();
        module.lazyResetGrad();
      }
      const packed = module.memoryStats().packed;
      // float32 copies of the three weights (float16 ones widened), padded to 8 columns
      assert.equal(packed, LAYERS * WIDTH * WIDTH * 4, `packed ${packed} bytes`);
      const before = module.eval().runAll(x(9), y())[0].data[0];
      // a second module over the same state reads the first one's panels
      const second = await Module.create(art.trainingModel, state, art.evalModel);
      if (form === 'float32') {
        // written through the state: the next step of either module reads the new weight
        const w = state.parameters.get('l1.weight').data;
        state.parameters.set('l1.weight', w.map((v, i) => (i % 3 ? v * 1.5 : -v)));
      }
      const afterSecond = second.eval().runAll(x(9), y())[0].data[0];
      second.release();
      const after = module.eval().runAll(x(9), y())[0].data[0];
      const afterTrain = module.train().runAll(x(3), y())[0].data[0];
      optimizer.release();
      module.release();
      // with the modules that packed released, a new module packs per product until its first step
      const plain = await Module.create(art.trainingModel, state, art.evalModel);
      try {
        assert.equal(plain.memoryStats().packed, 0);
        const want = plain.eval().runAll(x(9), y())[0].data[0];
        assert.equal(after, want, 'eval: packed panels against packing per product');
        assert.equal(afterSecond, want, 'eval of the second module');
        assert.equal(plain.train().runAll(x(3), y())[0].data[0], afterTrain, 'train: packed panels against packing per product');
      } finally {
        plain.release();
      }
      if (form === 'float32') assert.notEqual(after, before, 'the written weight changed the loss');
      else assert.equal(after, before);
    } finally {
      state.release();
    }
  });
}
