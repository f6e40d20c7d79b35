// The webgpu backend in Chromium (navigator.gpu: SwiftShader where there is no GPU): the golden
// MLP's forward pass and its step-0 training graph (loss and backward) run on the page's GPU and
// give the wasm backend's numbers; the golden CNN (Conv, BatchNorm, MaxPool) trains on it to the
// wasm backend's losses and parameters; inside webtrain.worker() too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBrowser, onTestPage } from './harness.mjs';

const env = startBrowser(undefined, ['--enable-unsafe-webgpu']);

test('the MLP and its training graph on WebGPU in a page give the wasm backend\'s numbers', () =>
  onTestPage(env, async (page) => {
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const g = await t.golden();
      const [x, y] = g.steps[0];
      const both = async (model, feeds) => {
        const out = {};
        for (const backend of ['wasm', 'webgpu']) {
          const s = await wt.InferenceSession.create(model, { backend });
          out[backend] = { backend: s.backend, y: await s.run(feeds) };
          s.release();
        }
        return out;
      };
      const forward = await both(g.model, { input: x });
      const art = await wt.artifacts.generateArtifacts(g.model, g.options);
      const state = await wt.CheckpointState.loadCheckpoint(art.checkpoint);
      const feeds = {};
      const probe = await wt.InferenceSession.create(art.trainingModel, { backend: 'wasm' });
      for (const n of probe.inputNames) {
        const grad = /^(.*)_grad\.accumulation\.buffer$/.exec(n);
        if (n === 'lazy_reset_grad') feeds[n] = new wt.Tensor('bool', Uint8Array.of(1), [1]);
        else if (grad) feeds[n] = new wt.Tensor('float32', new Float32Array(state.parameters.get(grad[1]).data.length), state.parameters.get(grad[1]).dims);
        else if (state.parameters.has(n)) feeds[n] = new wt.Tensor('float32', state.parameters.get(n).data, state.parameters.get(n).dims);
        else feeds[n] = n === 'input' ? x : y;
      }
      probe.release();
      state.release();
      const training = await both(art.trainingModel, feeds);
      const pick = (o, name) => ({ backend: o.backend, data: Array.from(o.y[name].data), dims: o.y[name].dims });
      return {
        forward: { wasm: pick(forward.wasm, 'output'), webgpu: pick(forward.webgpu, 'output') },
        loss: { wasm: pick(training.wasm, 'loss'), webgpu: pick(training.webgpu, 'loss'), expected: g.c.steps[0].loss },
        adapter: wt.runtimeInfo().adapter,
      };
    });
    assert.equal(r.forward.webgpu.backend, 'webgpu');
    assert.ok(r.adapter && r.adapter.limits.maxStorageBufferBindingSize > 0, JSON.stringify(r.adapter));
    assert.deepEqual(r.forward.webgpu.dims, r.forward.wasm.dims);
    r.forward.webgpu.data.forEach((v, i) => assert.ok(Math.abs(v - r.forward.wasm.data[i]) <= 1e-5 * (1 + Math.abs(r.forward.wasm.data[i])), `output[${i}] ${v} vs ${r.forward.wasm.data[i]}`));
    assert.equal(r.loss.webgpu.backend, 'webgpu');
    assert.ok(Math.abs(r.loss.webgpu.data[0] - r.loss.wasm.data[0]) <= 1e-6 * Math.abs(r.loss.wasm.data[0]), `loss ${r.loss.webgpu.data[0]} vs ${r.loss.wasm.data[0]}`);
    assert.ok(Math.abs(r.loss.webgpu.data[0] - r.loss.expected) <= 1e-5 * Math.abs(r.loss.expected), `loss ${r.loss.webgpu.data[0]} vs PyTorch ${r.loss.expected}`);
  }));

test('a CNN with BatchNorm trains on WebGPU in a page to the wasm backend\'s losses and parameters', () =>
  onTestPage(env, async (page) => {
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const g = await t.golden('cnn_bn_ce_sgd');
      const art = await wt.artifacts.generateArtifacts(g.model, g.options);
      const out = {};
      for (const backend of ['wasm', 'webgpu']) {
        const state = await wt.CheckpointState.loadCheckpoint(art.checkpoint);
        const module = await wt.Module.create(art.trainingModel, state, art.evalModel, { backend });
        const optimizer = await wt.Optimizer.create(art.optimizerModel, module);
        optimizer.setLearningRate(g.c.optimizer.lr);
        const losses = [];
        for (const batch of g.steps) {
          losses.push((await module.run(...batch)).data[0]);
          await optimizer.step();
          module.lazyResetGrad();
        }
        const params = {};
        for (const name of state.parameters.keys()) params[name] = Array.from((await state.parameters.get(name)).data);
        out[backend] = { backend: module.backend, losses, params };
        optimizer.release();
        module.release();
        state.release();
      }
      return { ...out, expected: g.c.steps.map((s) => s.loss) };
    });
    assert.equal(r.webgpu.backend, 'webgpu');
    assert.equal(r.webgpu.losses.length, r.expected.length);
    r.webgpu.losses.forEach((v, i) => {
      assert.ok(Math.abs(v - r.wasm.losses[i]) <= 1e-5 * Math.abs(r.wasm.losses[i]), `step ${i} loss ${v} vs wasm ${r.wasm.losses[i]}`);
      assert.ok(Math.abs(v - r.expected[i]) <= 1e-4 * Math.abs(r.expected[i]), `step ${i} loss ${v} vs PyTorch ${r.expected[i]}`);
    });
    for (const [name, want] of Object.entries(r.wasm.params))
      r.webgpu.params[name].forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-5 * (1 + Math.abs(want[i])), `${name}[${i}] ${v} vs wasm ${want[i]}`));
  }));

test('an InferenceSession on webgpu inside webtrain.worker() gives the page\'s outputs', () =>
  onTestPage(env, async (page) => {
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const g = await t.golden();
      const [x] = g.steps[0];
      const onPage = await wt.InferenceSession.create(g.model, { backend: 'webgpu' });
      const a = (await onPage.run({ input: x })).output;
      onPage.release();
      const w = await wt.worker();
      try {
        const s = await w.InferenceSession.create(g.model, { backend: 'webgpu' });
        const b = (await s.run({ input: x })).output;
        await s.release();
        return { page: Array.from(a.data), worker: Array.from(b.data), info: await w.runtimeInfo() };
      } finally {
        w.terminate();
      }
    });
    assert.deepEqual(r.worker, r.page);
    assert.ok(r.info.adapter, 'the worker opened a GPU device');
  }));

test('inside webtrain.worker() a CNN fits on WebGPU, saves to IndexedDB and exports; the page resumes the checkpoint on wasm', () =>
  onTestPage(env, async (page) => {
    const r = await page.evaluate(async () => {
      const { webtrain: wt, t } = window;
      const g = await t.golden('cnn_bn_ce_sgd');
      const art = await wt.artifacts.generateArtifacts(g.model, g.options);
      const options = { batches: g.steps, epochs: 2, progress: false };
      // the page on wasm: the numbers the worker's GPU must give
      const ref = {};
      {
        const state = await wt.CheckpointState.loadCheckpoint(art.checkpoint);
        const module = await wt.Module.create(art.trainingModel, state, art.evalModel, { backend: 'wasm' });
        const optimizer = await wt.Optimizer.create(art.optimizerModel, module);
        ref.losses = Array.from((await wt.fit(module, optimizer, options)).losses);
        ref.params = t.params(state);
        [optimizer, module, state].forEach((o) => o.release());
      }
      const w = await wt.worker();
      let backend, losses, exported;
      try {
        const state = await w.CheckpointState.loadCheckpoint(art.checkpoint);
        const module = await w.Module.create(art.trainingModel, state, art.evalModel, { backend: 'webgpu' });
        const optimizer = await w.Optimizer.create(art.optimizerModel, module);
        backend = await module.backend();
        losses = Array.from((await w.fit(module, optimizer, options)).losses);
        await w.CheckpointState.saveCheckpoint(state, 'idb://webgpu-worker', { includeOptimizerState: true });
        exported = await module.exportModelForInferencing(['output']);
      } finally {
        w.terminate();
      }
      // the page: the worker's checkpoint trains on wasm; its exported model runs
      const state = await wt.CheckpointState.loadCheckpoint('idb://webgpu-worker');
      const saved = t.params(state);
      const module = await wt.Module.create(art.trainingModel, state, art.evalModel, { backend: 'wasm' });
      const optimizer = await wt.Optimizer.create(art.optimizerModel, module);
      const resumed = (await module.run(...g.steps[0])).data[0];
      await optimizer.step();
      const s = await wt.InferenceSession.create(exported, { backend: 'wasm' });
      const out = (await s.run({ input: g.steps[0][0] })).output;
      [s, optimizer, module, state].forEach((o) => o.release());
      const diff = (a, b) => Math.max(...Object.keys(b).map((n) => Math.max(...b[n].map((v, i) => Math.abs(a[n][i] - v) / (1 + Math.abs(v))))));
      return { backend, losses, ref: ref.losses, paramDiff: diff(saved, ref.params), resumed, out: Array.from(out.data) };
    });
    assert.equal(r.backend, 'webgpu');
    assert.equal(r.losses.length, r.ref.length);
    r.losses.forEach((v, i) => assert.ok(Math.abs(v - r.ref[i]) <= 1e-5 * Math.abs(r.ref[i]), `step ${i}: ${v} vs wasm ${r.ref[i]}`));
    assert.ok(r.paramDiff <= 1e-5, `the checkpoint's parameters are ${r.paramDiff} from the page's`);
    assert.ok(Number.isFinite(r.resumed) && r.out.length > 0 && r.out.every(Number.isFinite));
  }));
