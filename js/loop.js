// trainEpochs: the training loop (epochs over batches: module.run, optimizer.step, the
// scheduler's step, lazyResetGrad), with progress reports and cancellation. The same loop runs
// in Node, on a page, and inside webtrain.worker() (web/worker.js calls it).
import { WebtrainError } from './core.js';
import { Tensor } from './tensor.js';
import { Module, Optimizer } from './training.js';
import { toTensor } from './feeds.js';

/** Rows [start, end) of a tensor whose first dim is the sample axis (a view, no copy). */
function rows(t, start, end) {
  const per = t.size / t.dims[0];
  return new Tensor(t.type, t.data.subarray(start * per, end * per), [end - start, ...t.dims.slice(1)]);
}

function gather(t, idx) {
  const per = t.size / t.dims[0];
  const out = new t.data.constructor(idx.length * per);
  idx.forEach((r, i) => out.set(t.data.subarray(r * per, (r + 1) * per), i * per));
  return new Tensor(t.type, out, [idx.length, ...t.dims.slice(1)]);
}

/** A seeded shuffle of 0..n-1 (the same for the same seed, everywhere). */
function permutation(n, seed) {
  const p = Array.from({ length: n }, (_, i) => i);
  let s = seed >>> 0 || 1;
  for (let i = n - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

function lossValue(out) {
  const t = Array.isArray(out) ? out[0] : out;
  return t && t.data && t.data.length ? Number(t.data[0]) : NaN;
}

const asBatch = (b) => (Array.isArray(b) ? b : [b]);
const isIterable = (x) => x != null && (typeof x[Symbol.iterator] === 'function' || typeof x[Symbol.asyncIterator] === 'function');

/**
 * epoch -> the batches of that epoch: an array (its length known, so totalSteps is), or an
 * (async) iterable.
 */
function planOf(o) {
  if (o.batches !== undefined && o.batches !== null) {
    const b = o.batches;
    if (Array.isArray(b)) return () => b.map(asBatch);
    if (typeof b === 'function') return (epoch) => b(epoch);
    if (isIterable(b)) {
      if ((o.epochs ?? 1) !== 1) throw new WebtrainError('trainEpochs: an iterable of batches can be read once: give epochs: 1, an array, or a function epoch => batches');
      return () => b;
    }
    throw new WebtrainError('trainEpochs: batches must be an array of batches, an (async) iterable of batches or a function epoch => batches');
  }
  if (o.inputs) {
    const inputs = o.inputs.map((x, i) => toTensor(x, `#${i}`));
    const n = inputs[0].dims[0];
    if (inputs.some((t) => t.dims[0] !== n)) throw new WebtrainError(`trainEpochs: every input needs the same number of samples along axis 0; got ${inputs.map((t) => t.dims[0]).join(', ')}`);
    const bs = o.batchSize ?? n;
    if (!Number.isInteger(bs) || bs <= 0) throw new WebtrainError(`trainEpochs: batchSize must be an integer > 0; got ${bs}`);
    return (epoch) => {
      const perm = o.shuffle ? permutation(n, (o.seed ?? 1) + epoch * 7919) : null;
      const out = [];
      for (let s = 0; s < n; s += bs) {
        const e = Math.min(n, s + bs);
        if (o.dropLast && e - s < bs) break;
        out.push(inputs.map((t) => (perm ? gather(t, perm.slice(s, e)) : rows(t, s, e))));
      }
      return out;
    };
  }
  throw new WebtrainError('trainEpochs: give inputs ([tensors with samples along axis 0] + batchSize) or batches ([[input, labels], ...])');
}

/** The error trainEpochs rejects with when its signal aborts (code 'AbortError'). */
export function abortError(step, totalSteps) {
  const e = new WebtrainError(step === undefined ? 'trainEpochs: cancelled before it started' : `trainEpochs: cancelled after ${step} of ${totalSteps ?? '?'} steps`);
  e.code = 'AbortError';
  return e;
}

/** Lets the event loop run (abort events, messages) without setTimeout's clamping. */
let yielder = null;
function yieldNow() {
  if (!yielder) {
    if (typeof setImmediate === 'function') {
      yielder = () => new Promise((resolve) => setImmediate(resolve));
    } else if (typeof MessageChannel === 'function') {
      const channel = new MessageChannel();
      const waiting = [];
      channel.port1.onmessage = () => waiting.shift()?.();
      yielder = () =>
        new Promise((resolve) => {
          waiting.push(resolve);
          channel.port2.postMessage(0);
        });
    } else {
      yielder = () => new Promise((resolve) => setTimeout(resolve, 0));
    }
  }
  return yielder();
}

/**
 * Trains `module` with `optimizer` (and `scheduler`, stepped after each optimizer step) for
 * `epochs` (default 1) epochs. The data: `inputs` (tensors with the samples along axis 0, cut
 * into batches of `batchSize`, optionally `shuffle`d with `seed`, `dropLast` dropping a short
 * last batch) or `batches` (an array of batches, each the inputs of one module.run; a function
 * epoch => batches; or, for one epoch, any (async) iterable of batches). Calls
 * `onProgress({ step, totalSteps, epoch, epochs, batch, batches, loss, epochLoss, epochDone,
 * elapsedMs })` every `progressEvery` steps (default 1) and at the end of each epoch; `signal`
 * (an AbortSignal) stops it between steps, rejecting with a WebtrainError whose code is
 * 'AbortError'. Every `yieldMs` (default 30; Infinity: never) milliseconds it lets the event
 * loop run (abort events, messages, a page's rendering).
 * Resolves to { steps, epochs, losses (Float32Array, one per step), lastLoss, elapsedMs }.
 */
export async function trainEpochs(options = {}) {
  const o = options;
  const { module, optimizer, scheduler, onProgress, signal } = o;
  if (!(module instanceof Module)) throw new WebtrainError('trainEpochs: module must be a Module (in webtrain.worker(): a Module of that worker)');
  if (!(optimizer instanceof Optimizer)) throw new WebtrainError('trainEpochs: optimizer must be an Optimizer (in webtrain.worker(): an Optimizer of that worker)');
  if (signal?.aborted) throw abortError();
  const epochs = o.epochs ?? 1;
  const progressEvery = Math.max(1, o.progressEvery ?? 1);
  const yieldMs = o.yieldMs ?? 30;
  const plan = planOf(o);
  const first = plan(0);
  const known = Array.isArray(first) ? first.length : undefined;
  const totalSteps = known === undefined ? undefined : known * epochs;
  const losses = [];
  const t0 = performance.now();
  let lastYield = t0;
  let step = 0;
  module.train();
  for (let epoch = 0; epoch < epochs; epoch++) {
    const batches = epoch === 0 ? first : plan(epoch);
    const count = Array.isArray(batches) ? batches.length : undefined;
    // An (async) iterable: one batch read ahead, so that the last batch of an epoch is known.
    const it = Array.isArray(batches) ? null : (batches[Symbol.asyncIterator] ?? batches[Symbol.iterator]).call(batches);
    let next = it ? await it.next() : null;
    let sum = 0;
    for (let b = 0; it ? !next.done : b < count; b++) {
      const batch = asBatch(it ? next.value : batches[b]);
      if (it) next = await it.next();
      const loss = lossValue(module.run(...batch));
      optimizer.step();
      if (scheduler) scheduler.step();
      module.lazyResetGrad();
      losses.push(loss);
      sum += loss;
      step++;
      const last = it ? next.done : b === count - 1;
      if (onProgress && (step % progressEvery === 0 || last)) {
        onProgress({ step, totalSteps, epoch, epochs, batch: b + 1, batches: count ?? (last ? b + 1 : undefined), loss, epochLoss: sum / (b + 1), epochDone: last, elapsedMs: performance.now() - t0 });
      }
      if (performance.now() - lastYield > yieldMs) {
        await yieldNow();
        lastYield = performance.now();
      }
      if (signal?.aborted) throw abortError(step, totalSteps);
    }
  }
  const lossArray = Float32Array.from(losses);
  return { steps: step, epochs, losses: lossArray, lastLoss: lossArray[step - 1], elapsedMs: performance.now() - t0 };
}
