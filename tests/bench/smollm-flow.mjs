// The LoRA fine-tuning flow of tests/bench/smollm-lora.mjs, the same in Node and on a Chromium page
// (served there under /bench/): generateArtifacts(model, { lora: rank 8 on every attention and MLP
// projection }), loadCheckpoint, Module.create, Optimizer.create (AdamW), `steps` train steps on
// [batch, seq] token ids with next-token labels, one eval step. `snap(phase)` is awaited after
// each phase (the caller records memory there). Returns what it measured; throws with the phase
// that failed.
export const TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];

export async function loraFlow(wt, model, { batch, seq, vocab, steps, rank = 8, alpha = 16, backend, snap = async () => {} }) {
  const out = {};
  let phase = 'generateArtifacts';
  const seconds = (t0) => +((performance.now() - t0) / 1000).toFixed(2);
  try {
    const t0 = performance.now();
    const lora = { rank, alpha, targets: TARGETS, seed: 0 };
    const art = await wt.artifacts.generateArtifacts(model, { lora, loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
    out.genSeconds = seconds(t0);
    out.artifactBytes = {};
    for (const [k, v] of Object.entries(art)) out.artifactBytes[k] = v?.byteLength ?? 0;
    await snap('generated');
    phase = 'load';
    const t1 = performance.now();
    const state = await wt.CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await wt.Module.create(art.trainingModel, state, art.evalModel, backend ? { backend } : {});
    const optimizer = await wt.Optimizer.create(art.optimizerModel, module);
    out.loadSeconds = seconds(t1);
    out.trainableParams = module.getParametersSize(true);
    await snap('loaded');
    phase = 'train';
    // a fixed pseudo-random text; labels are the next token (the last wraps)
    const ids = BigInt64Array.from({ length: batch * seq }, (_, i) => BigInt((i * 7919 + 13) % vocab));
    const next = BigInt64Array.from({ length: batch * seq }, (_, i) => ids[i % seq === seq - 1 ? i - seq + 1 : i + 1]);
    const x = new wt.Tensor('int64', ids, [batch, seq]);
    const y = new wt.Tensor('int64', next, [batch, seq]);
    const losses = [];
    const times = [];
    for (let i = 0; i < steps; i++) {
      const t0 = performance.now();
      losses.push((await module.train().runAll(x, y))[0].data[0]); // (a Promise on webgpu)
      await optimizer.step();
      module.lazyResetGrad();
      times.push(performance.now() - t0);
      if (i === 0) await snap('first step');
    }
    out.firstStepMs = +times[0].toFixed(1);
    const rest = times.slice(1).sort((a, b) => a - b);
    out.msPerStep = rest.length ? +rest[rest.length >> 1].toFixed(1) : null; // median after the first (which plans)
    out.msPerStepMin = rest.length ? +rest[0].toFixed(1) : null;
    out.tokensPerSecond = out.msPerStep ? +((batch * seq * 1000) / out.msPerStep).toFixed(1) : null;
    out.losses = losses.map((l) => +l.toFixed(4));
    await snap('trained');
    phase = 'eval';
    out.evalLoss = (await module.eval().runAll(x, y))[0].data[0];
    await snap('evaluated');
    out.memoryStats = module.memoryStats();
    if (!losses.every(Number.isFinite) || !Number.isFinite(out.evalLoss)) throw new Error(`non-finite loss: ${losses} / ${out.evalLoss}`);
    if (steps > 2 && !(losses.at(-1) < losses[0])) throw new Error(`the loss did not fall: ${losses}`);
    optimizer.release();
    module.release();
    state.release();
  } catch (e) {
    e.message = `${phase}: ${e.message}`;
    e.partial = out;
    throw e;
  }
  return out;
}
