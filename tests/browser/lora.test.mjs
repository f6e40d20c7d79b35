// LoRA in Chromium: the tiny Llama-style golden model gets adapters generated in the page and in
// a worker, trains (losses falling, as the same steps in Node to float rounding: the page may
// run another build), and exports the
// merged model and the .onnx_adapter file there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBrowser, onTestPage } from './harness.mjs';
import { CheckpointState, Module, Optimizer, Tensor, artifacts } from '../../js/index.js';

const env = startBrowser();
const MODEL = 'tests/golden/cases/lora_tiny_llama_adamw/model.onnx';
const LORA = { rank: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'gate_proj'], seed: 3 };

/** The same steps in any webtrain namespace (Node's modules, or window.webtrain). */
async function trainSteps(wt, model, lora) {
  const art = await wt.artifacts.generateArtifacts(model, { lora, loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const state = await wt.CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await wt.Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await wt.Optimizer.create(art.optimizerModel, module);
  optimizer.setLearningRate(2e-2);
  const ids = new wt.Tensor('int64', BigInt64Array.from({ length: 12 }, (_, i) => BigInt((i * 7) % 32)), [2, 6]);
  const labels = new wt.Tensor('int32', Int32Array.from({ length: 12 }, (_, i) => ((i + 1) * 7) % 32), [2, 6]);
  const losses = [];
  for (let k = 0; k < 4; k++) {
    losses.push(module.run(ids, labels).data[0]);
    optimizer.step();
    module.lazyResetGrad();
  }
  const merged = await module.exportMergedModel(['logits']);
  const { adapter } = await module.exportLoraAdapter(['logits']);
  optimizer.release();
  module.release();
  state.release();
  return { losses, merged: merged.byteLength, adapter: adapter.byteLength };
}

test('LoRA generates, trains and exports in a Chromium page and worker as in Node', () =>
  onTestPage(env, async (page) => {
    const node = await trainSteps({ artifacts, CheckpointState, Module, Optimizer, Tensor }, MODEL, LORA);
    assert.ok(node.losses[3] < node.losses[0], `losses fall: ${node.losses}`);
    const r = await page.evaluate(async ([src, model, lora]) => {
      const { webtrain: wt, t } = window;
      const trainSteps = new Function(`return (${src})`)();
      const inPage = await trainSteps(wt, `/${model}`, lora);
      const w = await wt.worker();
      // in the worker: generation (RegExp targets cross as structured clones)
      const art = await w.artifacts.generateArtifacts(`/${model}`, { lora: { ...lora, targets: [/q_proj|v_proj|gate_proj/] }, loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
      const direct = await wt.artifacts.generateArtifacts(`/${model}`, { lora, loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
      w.terminate();
      t.status('passed: lora');
      return { inPage, sameCheckpoint: art.checkpoint.length === direct.checkpoint.length && art.checkpoint.every((b, i) => b === direct.checkpoint[i]) };
    }, [trainSteps.toString(), MODEL, LORA]);
    // the page may run another build (threads, relaxed SIMD): the same losses to float rounding
    for (const [k, l] of node.losses.entries()) assert.ok(Math.abs(r.inPage.losses[k] - l) <= 1e-5 * Math.abs(l), `step ${k}: ${r.inPage.losses[k]} vs ${l}`);
    assert.equal(r.inPage.merged, node.merged);
    assert.equal(r.inPage.adapter, node.adapter);
    assert.ok(r.sameCheckpoint, 'the worker generates the same adapters from RegExp targets');
  }));
