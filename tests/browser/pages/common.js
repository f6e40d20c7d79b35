// Helpers for the browser test pages: the golden MLP case fetched from the static server, bit
// comparisons, and a visible log (for the screenshots).
import * as webtrain from '/web/index.js';

const { Tensor, artifacts } = webtrain;

export function status(text) {
  document.getElementById('status').textContent = text;
}

export function log(line) {
  document.getElementById('log').textContent += `${line}\n`;
}

const ARRAYS = { float32: Float32Array, int32: Int32Array, int64: BigInt64Array };

async function fetchBytes(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * The golden case: { c (case.json), model (bytes), steps: [[input, labels] Tensors per step],
 * options (generateArtifacts options), expected(k) -> { name: Float32Array } params after step k }.
 */
export async function golden(name = 'mlp_ce_adamw') {
  const base = `/tests/golden/cases/${name}/`;
  const c = await (await fetch(`${base}case.json`)).json();
  const tensor = async (ref) => {
    const b = await fetchBytes(base + ref.file);
    return new Tensor(ref.dtype, new ARRAYS[ref.dtype](b.buffer), ref.shape);
  };
  const model = await fetchBytes(`${base}model.onnx`);
  const steps = [];
  for (const s of c.steps) steps.push(await Promise.all(c.training_graph_input_names.map((n) => tensor(s.inputs[n]))));
  const o = c.optimizer;
  const options = {
    requiresGrad: c.requires_grad,
    frozenParams: c.frozen_params,
    loss: artifacts.LossType[c.loss],
    optimizer: { type: o.type, betas: o.betas, eps: o.eps, weightDecay: o.weight_decay, adamMode: o.adam_mode },
  };
  const expected = async (k) => {
    const out = {};
    for (const [n, ref] of Object.entries(c.steps[k].params_after)) out[n] = (await tensor(ref)).data;
    return out;
  };
  return { c, model, steps, options, expected };
}

/** { name: Float32Array } of every parameter of a state. */
export function params(state) {
  const out = {};
  for (const [n, p] of state.parameters) out[n] = p.data;
  return out;
}

/** First bit-level difference between two { name: Float32Array }, or null. */
export function bitDiff(a, b) {
  const names = Object.keys(a).sort();
  if (names.join() !== Object.keys(b).sort().join()) return `names differ: ${names} vs ${Object.keys(b).sort()}`;
  for (const n of names) {
    const x = new Uint32Array(a[n].buffer, a[n].byteOffset, a[n].length);
    const y = new Uint32Array(b[n].buffer, b[n].byteOffset, b[n].length);
    if (x.length !== y.length) return `${n}: length ${x.length} vs ${y.length}`;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return `${n}[${i}]: ${a[n][i]} vs ${b[n][i]}`;
  }
  return null;
}

/** First element outside |a - e| <= atol + rtol |e|, or null. */
export function closeDiff(actual, expected, { rtol, atol }) {
  for (const [n, e] of Object.entries(expected)) {
    const a = actual[n];
    if (!a) return `missing ${n}`;
    for (let i = 0; i < e.length; i++) if (!(Math.abs(a[i] - e[i]) <= atol + rtol * Math.abs(e[i]))) return `${n}[${i}]: ${a[i]} vs expected ${e[i]}`;
  }
  return null;
}

/** Local (main-thread) session from artifacts. */
export async function session(art, checkpoint) {
  const state = await webtrain.CheckpointState.loadCheckpoint(checkpoint ?? art.checkpoint);
  const module = await webtrain.Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await webtrain.Optimizer.create(art.optimizerModel, module);
  return { state, module, optimizer };
}

export function trainSteps({ module, optimizer }, batches) {
  module.train();
  const losses = [];
  for (const b of batches) {
    losses.push(module.run(...b).data[0]);
    optimizer.step();
    module.lazyResetGrad();
  }
  return losses;
}

/**
 * The README flow on generated artifacts through `api` (the page's webtrain or a worker() proxy:
 * every call awaited): load the checkpoint, create the module (onProgress when given) and the
 * optimizer, `steps` steps on (X, labels), release all; the losses.
 */
export async function trainArtifacts(api, art, X, labels, { steps = 3, onProgress } = {}) {
  const state = await api.CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await api.Module.create(art.trainingModel, state, art.evalModel, onProgress ? { onProgress } : undefined);
  const optimizer = await api.Optimizer.create(art.optimizerModel, module);
  const losses = [];
  for (let i = 0; i < steps; i++) {
    const loss = await module.run(X, labels);
    losses.push(loss.data[0]);
    await optimizer.step();
    await module.lazyResetGrad();
  }
  await optimizer.release();
  await module.release();
  await state.release();
  return losses;
}

/** The bits of a Float32Array as hex (digests compared across builds and thread counts). */
export const hex = (f) => Array.from(new Uint32Array(f.buffer, f.byteOffset, f.length), (x) => x.toString(16).padStart(8, '0')).join('');

/**
 * Trains the golden case `g` on `batches`, on the page (init(opts)) or inside webtrain.worker(opts):
 * { info: runtimeInfo(), losses, params: { name: Float32Array } }.
 */
export async function trainGolden(g, batches, opts, inWorker) {
  if (!inWorker) {
    await webtrain.init(opts);
    const s = await session(await artifacts.generateArtifacts(g.model, g.options));
    return { info: webtrain.runtimeInfo(), losses: trainSteps(s, batches), params: params(s.state) };
  }
  const w = await webtrain.worker(opts);
  try {
    const info = await w.runtimeInfo();
    const art = await w.artifacts.generateArtifacts(g.model, g.options);
    const state = await w.CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await w.Module.create(art.trainingModel, state, art.evalModel);
    const optimizer = await w.Optimizer.create(art.optimizerModel, module);
    await module.train();
    const losses = [];
    for (const b of batches) {
      losses.push((await module.run(...b)).data[0]);
      await optimizer.step();
      await module.lazyResetGrad();
    }
    const out = {};
    for (const [name, p] of await state.parameters.entries()) out[name] = p.data;
    return { info, losses, params: out };
  } finally {
    w.terminate();
  }
}
