// The training loop: `fit` (epochs over batches: module.run, optimizer.step, the scheduler's
// step, lazyResetGrad; validation on the eval model, metrics, early stopping, a checkpoint per
// epoch, non-finite losses, progress, cancellation) and `trainEpochs`, its older, smaller form
// (the same loop, options in one object). The same loop runs in Node, on a page, and inside
// webtrain.worker() (web/worker.js calls it).
import { WebtrainError } from './core.js';
import { Tensor } from './tensor.js';
import { CheckpointState, Module, Optimizer } from './training.js';
import { toTensor } from './feeds.js';
import { progressBar } from './progress.js';
import { checkOptions } from './options.js';
import { TrainSteps, outputsOf, scalar } from './steps.js';

/** fit's options (js/loop.d.ts FitOptions), and those of its object-valued ones. */
export const FIT_OPTIONS = [
  'x', 'y', 'batchSize', 'batches', 'epochs', 'initialEpoch', 'shuffle', 'seed', 'dropLast', 'validation', 'validationSplit', 'validationBatchSize',
  'metrics', 'scheduler', 'callbacks', 'progressEvery', 'earlyStopping', 'checkpoint', 'signal', 'onNonFinite', 'progress', 'yieldMs',
];
export const CALLBACKS = ['onBatchEnd', 'onEpochEnd'];
const EARLY_STOPPING = ['monitor', 'patience', 'minDelta', 'mode', 'restoreBest'];
const CHECKPOINT = ['path', 'every', 'includeOptimizerState'];
const VALIDATION = ['x', 'y'];
/** trainEpochs' options (TrainEpochsOptions). */
export const TRAIN_EPOCHS_OPTIONS = ['module', 'optimizer', 'scheduler', 'inputs', 'batchSize', 'batches', 'epochs', 'shuffle', 'seed', 'dropLast', 'progressEvery', 'onProgress', 'signal', 'yieldMs'];

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
export function permutation(n, seed) {
  const p = Array.from({ length: n }, (_, i) => i);
  let s = seed >>> 0 || 1;
  for (let i = n - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

/** The seed of an epoch's shuffle. */
export const epochSeed = (seed, epoch) => (seed ?? 1) + epoch * 7919;

/** module.run's result as [loss, ...additional outputs] (a lone loss is a Tensor). */

const asBatch = (b) => (Array.isArray(b) ? b : [b]);
const isIterable = (x) => x != null && (typeof x[Symbol.iterator] === 'function' || typeof x[Symbol.asyncIterator] === 'function');
const asList = (x) => (Array.isArray(x) ? x : [x]);

/** Whole data sets (samples along axis 0) -> tensors, checked to have as many samples each. */
function dataset(what, inputs) {
  const ts = inputs.map((x, i) => toTensor(x, `#${i}`));
  const n = ts[0].dims[0];
  if (ts.some((t) => t.dims[0] !== n)) {
    // A plain typed array is one sample axis of its length: the likely cause is a forgotten shape.
    const flat = inputs.findIndex((x, i) => ArrayBuffer.isView(x) && ts.some((t) => t.dims[0] < ts[i].dims[0] && ts[i].size % t.dims[0] === 0));
    const rows = flat < 0 ? 0 : Math.min(...ts.map((t) => t.dims[0]));
    const hint = flat < 0 ? '' : `; input #${flat} is a plain ${inputs[flat].constructor.name} (1-D: ${ts[flat].size} samples): wrap it in a Tensor with its dims, e.g. new Tensor(data, [${rows}, ${ts[flat].size / rows}])`;
    throw new WebtrainError(`${what}: every input needs the same number of samples along axis 0; got ${ts.map((t) => t.dims[0]).join(', ')}${hint}`);
  }
  return ts;
}

/** Batches of `bs` samples over tensors ts, in the order `perm` (or as they are). */
function cut(ts, bs, perm, dropLast) {
  const n = ts[0].dims[0];
  const out = [];
  for (let s = 0; s < n; s += bs) {
    const e = Math.min(n, s + bs);
    if (dropLast && e - s < bs) break;
    out.push(ts.map((t) => (perm ? gather(t, perm.slice(s, e)) : rows(t, s, e))));
  }
  return out;
}

function batchSizeOf(what, bs) {
  if (!Number.isInteger(bs) || bs <= 0) throw new WebtrainError(`${what}: batchSize must be an integer > 0; got ${bs}`);
  return bs;
}

/**
 * The data: { plan: epoch -> the batches of that epoch (an array, its length known, or an
 * (async) iterable), validation: the validation batches or null }.
 */
function dataOf(what, o) {
  let val = null;
  if (o.validation) {
    const v = o.validation;
    checkOptions(v, VALIDATION, `${what}'s validation`);
    if (!v.x || !v.y) throw new WebtrainError(`${what}: validation needs { x, y }`);
    val = dataset(`${what}: validation`, [...asList(v.x), v.y]);
  }
  if (o.batches !== undefined && o.batches !== null) {
    if (o.validationSplit) throw new WebtrainError(`${what}: validationSplit needs x and y (give validation: { x, y } with batches)`);
    const b = o.batches;
    const vb = val && cut(val, batchSizeOf(what, o.validationBatchSize ?? o.batchSize ?? 32));
    if (Array.isArray(b)) return { plan: () => b.map(asBatch), validation: vb };
    if (typeof b === 'function') return { plan: (epoch) => b(epoch), validation: vb };
    if (isIterable(b)) {
      if ((o.epochs ?? 1) !== 1) throw new WebtrainError(`${what}: an iterable of batches can be read once: give epochs: 1, an array, or a function epoch => batches`);
      return { plan: () => b, validation: vb };
    }
    throw new WebtrainError(`${what}: batches must be an array of batches, an (async) iterable of batches or a function epoch => batches`);
  }
  if (o.x === undefined || o.x === null) throw new WebtrainError(`${what}: give x and y (tensors with the samples along axis 0) or batches ([[input, labels], ...])`);
  let ts = dataset(what, o.y === undefined || o.y === null ? asList(o.x) : [...asList(o.x), o.y]);
  const n = ts[0].dims[0];
  if (o.validationSplit) {
    if (val) throw new WebtrainError(`${what}: give validation or validationSplit, not both`);
    const k = Math.floor(n * o.validationSplit);
    if (!(o.validationSplit > 0 && o.validationSplit < 1) || k < 1 || k >= n) throw new WebtrainError(`${what}: validationSplit ${o.validationSplit} leaves no training or no validation samples of ${n}`);
    // The last samples, before any shuffling (as Keras does).
    val = ts.map((t) => rows(t, n - k, n));
    ts = ts.map((t) => rows(t, 0, n - k));
  }
  const bs = batchSizeOf(what, o.batchSize ?? 32);
  const m = ts[0].dims[0];
  return {
    plan: (epoch) => cut(ts, bs, o.shuffle ? permutation(m, epochSeed(o.seed, epoch)) : null, o.dropLast),
    validation: val && cut(val, batchSizeOf(what, o.validationBatchSize ?? bs)),
  };
}

/** Built-in metrics: name -> (outputs, y) => value of a batch. */
const METRICS = {
  /** Argmax over the last axis against integer labels (one column: a logit > 0 is class 1). */
  accuracy(outputs, y) {
    const p = outputs[0];
    if (!p) return NaN;
    const c = p.dims.at(-1) ?? 1;
    const n = p.size / c;
    let hits = 0;
    for (let i = 0; i < n; i++) {
      let best = 0;
      if (c === 1) best = p.data[i] > 0 ? 1 : 0;
      else for (let k = 1; k < c; k++) if (p.data[i * c + k] > p.data[i * c + best]) best = k;
      if (best === Number(y.data[i])) hits++;
    }
    return hits / n;
  },
};

/** metrics option -> [{ name, valName, fn }]. */
function metricsOf(what, metrics) {
  const list = Array.isArray(metrics) ? metrics.map((m, i) => [typeof m === 'string' ? m : m.name || `metric${i}`, m]) : Object.entries(metrics ?? {});
  return list.map(([name, m]) => {
    const fn = typeof m === 'function' ? m : METRICS[m];
    if (!fn) throw new WebtrainError(`${what}: unknown metric '${m}'; built in: ${Object.keys(METRICS).join(', ')}, or a function (outputs, y) => number`);
    return { name, valName: `val${name[0].toUpperCase()}${name.slice(1)}`, fn };
  });
}

/** Sums of batch values weighted by batch size. */
class Mean {
  sum = 0;
  count = 0;
  add(v, n) {
    this.sum += v * n;
    this.count += n;
  }
  get value() {
    return this.count ? this.sum / this.count : NaN;
  }
}

/** { name: mean } of the metrics that have values. */
const metricValues = (metrics, means, key = 'name') => Object.fromEntries(metrics.flatMap((m, i) => (means[i].count ? [[m[key], means[i].value]] : [])));

/** The metrics of one batch's outputs (after the loss) into means[]. */
function addMetrics(what, metrics, means, outs, batch) {
  if (!metrics.length) return;
  if (outs.length < 2) {
    throw new WebtrainError(
      `${what}: metrics need the model's output (e.g. its logits) next to the loss: give validation data (the eval model of artifacts webtrain generates outputs it), or generate the artifacts with additionalOutputNames: ['<the model output>'] (artifacts from elsewhere: with ONNX Runtime's additional_output_names)`,
    );
  }
  const y = batch[batch.length - 1];
  const n = y.dims?.[0] ?? 1;
  metrics.forEach((m, i) => means[i].add(Number(m.fn(outs.slice(1), y)), n));
}

/** The error fit / trainEpochs rejects with when its signal aborts (code 'AbortError'). */
export function abortError(step, totalSteps, what = 'trainEpochs') {
  const e = new WebtrainError(step === undefined ? `${what}: cancelled before it started` : `${what}: cancelled after ${step} of ${totalSteps ?? '?'} steps`);
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

/** earlyStopping option -> a judge of each epoch's entry, or null. */
function earlyStopper(what, es, hasValidation) {
  if (!es) return null;
  checkOptions(es, EARLY_STOPPING, `${what}'s earlyStopping`);
  const monitor = es.monitor ?? (hasValidation ? 'valLoss' : 'loss');
  const mode = es.mode ?? (/acc/i.test(monitor) ? 'max' : 'min');
  const sign = mode === 'max' ? -1 : 1;
  const minDelta = Math.abs(es.minDelta ?? 0);
  const patience = es.patience ?? 0;
  let best = Infinity;
  let wait = 0;
  return {
    restoreBest: !!es.restoreBest,
    bestEpoch: -1,
    /** -> { improved, stop } for this epoch's entry. */
    judge(entry) {
      const v = entry[monitor];
      if (typeof v !== 'number') throw new WebtrainError(`${what}: earlyStopping monitors '${monitor}', which the history does not have (it has ${Object.keys(entry).join(', ')})`);
      if (sign * v < best - minDelta) {
        best = sign * v;
        wait = 0;
        this.bestEpoch = entry.epoch;
        return { improved: true, stop: false };
      }
      wait++;
      return { improved: false, stop: wait >= patience };
    },
  };
}

/**
 * Trains `module` with `optimizer`; see js/loop.d.ts (FitOptions, FitResult) for the options.
 * One epoch: for each batch module.run, then (the loss finite) optimizer.step and
 * scheduler?.step, and lazyResetGrad either way; then validation on the eval model, the
 * history's entry, early stopping and the checkpoint.
 */
export async function fit(module, optimizer, options = {}) {
  checkOptions(options, FIT_OPTIONS, 'fit');
  return runFit(module, optimizer, options ?? {}, 'fit');
}

/** fit, its errors naming `what` (fit, trainEpochs). */
async function runFit(module, optimizer, o, what) {
  const { scheduler, signal } = o;
  const callbacks = o.callbacks ?? {};
  checkOptions(callbacks, CALLBACKS, `${what}'s callbacks`);
  if (!(module instanceof Module)) throw new WebtrainError(`${what}: module must be a Module (in webtrain.worker(): a Module of that worker)`);
  if (!(optimizer instanceof Optimizer)) throw new WebtrainError(`${what}: optimizer must be an Optimizer (in webtrain.worker(): an Optimizer of that worker)`);
  const onNonFinite = o.onNonFinite ?? 'throw';
  if (!['throw', 'skip', 'stop'].includes(onNonFinite)) throw new WebtrainError(`${what}: onNonFinite must be 'throw', 'skip' or 'stop'; got ${onNonFinite}`);
  const ckpt = o.checkpoint ? { every: 'epoch', includeOptimizerState: true, ...(typeof o.checkpoint === 'string' ? { path: o.checkpoint } : o.checkpoint) } : null;
  if (o.checkpoint && typeof o.checkpoint === 'object') checkOptions(o.checkpoint, CHECKPOINT, `${what}'s checkpoint`);
  if (ckpt && (!ckpt.path || ckpt.every !== 'epoch')) throw new WebtrainError(`${what}: checkpoint needs { path, every: 'epoch' }`);
  if (signal?.aborted) throw abortError(undefined, undefined, what);
  const initialEpoch = o.initialEpoch ?? 0;
  const epochs = o.epochs ?? 1;
  const progressEvery = Math.max(1, o.progressEvery ?? 1);
  const yieldMs = o.yieldMs ?? 30;
  const metrics = metricsOf(what, o.metrics);
  const { plan, validation } = dataOf(what, o);
  const stopper = earlyStopper(what, o.earlyStopping, !!validation);
  const bar = o.progress ? progressBar(o.progress) : null;
  const first = plan(initialEpoch);
  const known = Array.isArray(first) ? first.length : undefined;
  const totalSteps = known === undefined ? undefined : known * (epochs - initialEpoch);
  const losses = [];
  const history = [];
  const t0 = performance.now();
  let lastYield = t0;
  let step = 0;
  let skipped = 0;
  let stopped = null;
  let best = null; // the parameters of the best epoch (restoreBest)

  const pause = async () => {
    if (performance.now() - lastYield > yieldMs) {
      await yieldNow();
      lastYield = performance.now();
    }
    if (signal?.aborted) {
      const e = abortError(step, totalSteps, what);
      e.history = history;
      throw e;
    }
  };

  /** The validation set through the eval model: { valLoss, valMetric... }. */
  const validate = async () => {
    module.eval();
    try {
      const loss = new Mean();
      const means = metrics.map(() => new Mean());
      for (const batch of validation) {
        // every output of the eval model: those after the loss are the model's outputs in webtrain's artifacts
        const outs = await module._evalOutputs(...batch);
        const n = batch[batch.length - 1].dims?.[0] ?? 1;
        loss.add(scalar(outs[0]), n);
        addMetrics(what, metrics, means, outs, batch);
        await pause();
      }
      return { valLoss: loss.value, ...metricValues(metrics, means, 'valName') };
    } finally {
      module.train();
    }
  };

  module.train();
  const steps = new TrainSteps(module, optimizer, scheduler, onNonFinite);
  try {
    for (let epoch = initialEpoch; epoch < epochs && !stopped; epoch++) {
      const te = performance.now();
      const batches = epoch === initialEpoch ? first : plan(epoch);
      const count = Array.isArray(batches) ? batches.length : undefined;
      // An (async) iterable: one batch read ahead, so that the last batch of an epoch is known.
      const it = Array.isArray(batches) ? null : (batches[Symbol.asyncIterator] ?? batches[Symbol.iterator]).call(batches);
      let next = it ? await it.next() : null;
      let sum = 0;
      let applied = 0;
      let epochSkipped = 0;
      const means = metrics.map(() => new Mean());
      /** A step's outcome (its loss, or skipped): the history's counts, metrics, progress and onBatchEnd. */
      const record = async ({ item: { b, batch, last }, outs }) => {
        const loss = outs ? scalar(outs[0]) : NaN;
        const taken = !!outs; // else skipped: a non-finite loss
        if (taken) {
          losses.push(loss);
          sum += loss;
          applied++;
          step++;
          // Training metrics when the training model has the outputs (else validation's only).
          if (metrics.length && (outs.length > 1 || !validation)) addMetrics(what, metrics, means, outs, batch);
        } else {
          skipped++;
          epochSkipped++;
          if (onNonFinite === 'stop') stopped = 'nonFinite';
        }
        const info = {
          step, totalSteps, epoch, epochs, batch: b + 1, batches: count ?? (last ? b + 1 : undefined), loss, epochLoss: sum / applied,
          epochDone: last, elapsedMs: performance.now() - t0, ...(taken ? {} : { skipped: true }), ...metricValues(metrics, means),
        };
        if (bar) bar.batch(info);
        if (callbacks.onBatchEnd && (step % progressEvery === 0 || last || !taken) && (await callbacks.onBatchEnd(info)) === false) stopped = 'callback';
        if (!stopped) await pause();
      };
      try {
        for (let b = 0; it ? !next.done : b < count; b++) {
          const batch = asBatch(it ? next.value : batches[b]);
          if (it) next = await it.next();
          const last = it ? next.done : b === count - 1;
          for (const done of await steps.push({ b, batch, last }, batch)) await record(done);
          if (stopped) break;
          await steps.commit();
        }
        if (!stopped) for (const done of await steps.flush()) await record(done);
      } finally {
        await steps.cancel(); // a step the loop stopped before committing
      }
      const entry = { epoch, loss: sum / applied, ...metricValues(metrics, means) };
      if (validation && stopped !== 'nonFinite') Object.assign(entry, await validate());
      entry.lr = optimizer.getLearningRate();
      if (epochSkipped) entry.skipped = epochSkipped;
      entry.seconds = (performance.now() - te) / 1000;
      history.push(entry);
      if (stopper && stopped !== 'nonFinite') {
        const { improved, stop } = stopper.judge(entry);
        if (improved && stopper.restoreBest) best = await module.getContiguousParameters(false);
        if (stop) stopped ??= 'earlyStopping';
      }
      if (ckpt) await CheckpointState.saveCheckpoint(module.state, ckpt.path.replaceAll('{epoch}', String(epoch)), { includeOptimizerState: ckpt.includeOptimizerState });
      if (bar) bar.epoch(entry, epochs);
      if (callbacks.onEpochEnd && (await callbacks.onEpochEnd(entry)) === false) stopped ??= 'callback';
      if (!stopped) await pause();
    }
  } finally {
    bar?.done();
  }
  let restored = false;
  if (best && stopper.bestEpoch !== history.at(-1)?.epoch) {
    await module.copyBufferToParameters(best, false);
    restored = true;
    if (ckpt) await CheckpointState.saveCheckpoint(module.state, ckpt.path.replaceAll('{epoch}', String(stopper.bestEpoch)), { includeOptimizerState: ckpt.includeOptimizerState });
  }
  const lossArray = Float32Array.from(losses);
  return {
    history, steps: step, epochs: history.length, losses: lossArray, lastLoss: lossArray[step - 1], skipped, stopped,
    bestEpoch: stopper ? stopper.bestEpoch : undefined, restored, elapsedMs: performance.now() - t0,
  };
}

/**
 * fit's loop with the options of one object ({ module, optimizer, inputs | batches, ... }),
 * progress through onProgress({ step, totalSteps, epoch, epochs, batch, batches, loss,
 * epochLoss, epochDone, elapsedMs }). Resolves to { steps, epochs, losses, lastLoss, elapsedMs }.
 */
export async function trainEpochs(options = {}) {
  checkOptions(options, TRAIN_EPOCHS_OPTIONS, 'trainEpochs');
  const { module, optimizer, inputs, onProgress, ...rest } = options ?? {};
  if (rest.batches === undefined || rest.batches === null) {
    if (!inputs) throw new WebtrainError('trainEpochs: give inputs ([tensors with samples along axis 0] + batchSize) or batches ([[input, labels], ...])');
    rest.x = inputs;
    rest.batchSize ??= toTensor(inputs[0], '#0').dims[0];
  }
  const r = await runFit(module, optimizer, {
    ...rest,
    shuffle: !!rest.shuffle,
    callbacks: onProgress ? { onBatchEnd: (p) => void onProgress(p) } : undefined,
  }, 'trainEpochs');
  return { steps: r.steps, epochs: rest.epochs ?? 1, losses: r.losses, lastLoss: r.lastLoss, elapsedMs: r.elapsedMs };
}
