// webtrain.worker(): the training API in a dedicated Web Worker, so long training loops never
// block the page.
//
//   import * as webtrain from 'webtrain';              // the browser entry, web/index.js
//   const w = await webtrain.worker();                  // options: { wasmUrl, workerUrl }
//   const art = await w.artifacts.generateArtifacts('/model.onnx', { requiresGrad, loss: w.artifacts.LossType.CrossEntropyLoss, optimizer: 'AdamW' });
//   const state = await w.CheckpointState.loadCheckpoint(art.checkpoint);   // or 'idb://name', a URL
//   const module = await w.Module.create(art.trainingModel, state, art.evalModel);
//   const optimizer = await w.Optimizer.create(art.optimizerModel, module);
//   const loss = await module.run(x, labels);           // a Tensor, as in the synchronous API
//   await optimizer.step(); await module.lazyResetGrad();
//   // many steps inside the worker (js/loop.js's fit), with validation and progress:
//   const { history } = await w.fit(module, optimizer, { x, y: labels, batchSize: 32, epochs: 5,
//     shuffle: true, validation: { x: xVal, y: yVal }, metrics: ['accuracy'], scheduler, signal,
//     callbacks: { onBatchEnd: ({ step, loss }) => ..., onEpochEnd: ({ epoch, valAccuracy }) => ... } });
//   await w.CheckpointState.saveCheckpoint(state, 'idb://my-model', { includeOptimizerState: true });
//   w.terminate();
//
// Shape of the API: the same names as the synchronous API (js/index.js), with every method
// returning a Promise:
//   w.CheckpointState.loadCheckpoint(src) / .saveCheckpoint(state, dest?, opts)
//   w.Module.create(training, state, eval?)  w.Optimizer.create(model, module)
//   w.LinearLRScheduler.create(optimizer, warmup, total, initialLr?)  (a constructor cannot be async)
//   w.InferenceSession.create(model)  w.artifacts.generateArtifacts(model, opts) (built-in losses
//   only: an onnxblock.Block cannot cross to a worker)  w.artifacts.LossType / OptimType
//   w.idb.list/load/save/has/delete/clear   w.fit(module, optimizer, opts)   w.trainEpochs(opts)
//   w.inspect(src, opts)
//   w.terminate()
// Remote objects: proxies whose methods are listed in web/proxies.js (PROXIED): state.parameters
// .get/set/has/keys/values/entries/size(), state.properties.get/set/has/entries/size(),
// state.toBytes()/loadParameters(), module.train/eval/run/runNamed/runAll/predict/lazyResetGrad/memoryStats/
// getParametersSize/getContiguousParameters/copyBufferToParameters/exportModelForInferencing/
// exportMergedModel/exportLoraAdapter/
// inputNames/outputNames, optimizer.step/setLearningRate/getLearningRate, scheduler.step,
// session.run(feeds)/arenaBytes(), and release() on each. Getters of the synchronous API
// (parameters.size, module.isTraining, state.isLive) are methods here: `await state.parameters.size()`.
// A call behaves as on the page: the same results, the same errors (class, message, code,
// status; a released object's own error, a second release() doing nothing), option keys checked
// the same way. A proxy collected without release() has the worker drop its object ({ drop }),
// which the worker frees once it is collected there.
//
// Data: results (Tensors, bytes) are transferred from the worker, never copied twice.
// Arguments are copied (structured clone) unless marked with transfer(x): then the buffer of
// the typed array / Tensor x moves to the worker and x becomes unusable (detached) on this side.
// Relative URLs are resolved against the page (document.baseURI), not the worker script.
// idb:// locations work inside the worker (same origin, same database).
//
// Progress: fit and trainEpochs (the package's loop, js/loop.js, run in the worker) post { step,
// totalSteps, epoch, epochs, batch, batches, loss, epochLoss, epochDone, elapsedMs, <metrics> }
// every `progressEvery` steps (default 1) and at the end of each epoch, fit also each epoch's
// history entry; they go to fit's callbacks.onBatchEnd / onEpochEnd (trainEpochs' onProgress)
// and, as a 'progress' CustomEvent, to listeners on `w`, which is an EventTarget (fit's
// event.detail has type 'batch' or 'epoch'). opts.signal (an AbortSignal) cancels between
// steps; a callback returning false (or a Promise of false) stops fit: onEpochEnd's before the
// next epoch (the worker waits for its answer), onBatchEnd's when its message arrives (a few
// batches later).
// fit's metrics are built-in names only and its checkpoint an idb:// location.
//
// Protocol (host <-> web/worker.js), one message per call, answered by id:
//   host -> worker: { id, op: 'init', options } | { id, op: 'static', name, args }
//                   | { id, op: 'call', ref, path, args } | { cancel: id } | { stop: id } | { drop: ref }
//                   | { answer: id, stop }   (to a progress message with wait: true)
//   worker -> host: { id, value } | { id, error: { name, message, code, status, history? } }
//                   | { progress: id, detail, wait? }
// Worker objects cross as { __ref: id, kind }, Tensors as { __tensor: { type, data, dims } }
// (web/wire.js, both ends).
import { Tensor } from '../js/tensor.js';
import { WebtrainError, WASM_ERROR, WASM_OPTION, THREADED_OPTION, urlOrNull } from '../js/core.js';
import { LossType, OptimType } from '../js/abi.js';
import { PROXIED, STATICS, IDB_FUNCTIONS } from './proxies.js';
import { encode, decode, PROGRESS } from './wire.js';
import { pageBase } from './init.js';
import { checkOptions, MODEL_OPTIONS } from '../js/options.js';
import { CALLBACKS, FIT_OPTIONS, TRAIN_EPOCHS_OPTIONS } from '../js/loop.js';
import { LOAD_OPTIONS, MODULE_OPTIONS } from '../js/training.js';

/** worker()'s options (web/index.d.ts WorkerOptions). */
const WORKER_OPTIONS = ['wasmUrl', 'workerUrl', 'threads', 'threadedUrl', 'simd'];

/** The error classes rebuilt on this side from a worker's error by name (others: an Error with that name). */
const ERRORS = { WebtrainError, TypeError, RangeError };

const marked = new WeakSet();

/** Marks a typed array or Tensor to be transferred (moved, not copied) to the worker. Returns it. */
export function transfer(x) {
  if (x && typeof x === 'object') marked.add(x);
  return x;
}

const base = pageBase;

/** Model/checkpoint locations: relative URLs against the page; bytes, idb:// and absolute URLs as they are. */
function location(src) {
  if (src instanceof URL) return src.href;
  if (typeof src !== 'string' || /^[a-z][a-z0-9+.-]*:/i.test(src)) return src;
  const b = base();
  return b ? new URL(src, b).href : src;
}

/** Options with their externalData's URL strings made absolute against the page (as the models' are) to cross to the worker. */
function externalOption(o) {
  if (!Array.isArray(o?.externalData)) return o;
  return { ...o, externalData: o.externalData.map((e) => (typeof e?.data === 'string' || e?.data instanceof URL ? { ...e, data: location(e.data) } : e)) };
}

/**
 * An options object whose onProgress (a function: it cannot be cloned) stays here: [options with
 * onProgress: PROGRESS (the worker posts { loaded, total } to this call), onProgress] for #static.
 * Its keys are checked here (`known`, `context`), as the call checks them on the page: a
 * misspelled function-valued key would fail to cross instead.
 */
function progressOption(o, known, context) {
  checkOptions(o, known, context);
  if (typeof o?.onProgress !== 'function') return [o];
  const fn = o.onProgress;
  return [{ ...o, onProgress: PROGRESS }, (detail) => void fn(detail)];
}

class Remote {
  #w;
  #id;
  constructor(w, id) {
    this.#w = w;
    this.#id = id;
  }
  get __ref() {
    return this.#id;
  }
  _call(path, ...args) {
    return this.#w._send({ op: 'call', ref: this.#id, path, args }, args);
  }
}

/** Host-side checks before a call is sent: class -> method -> (...args) => an error or null. */
const GUARDS = {
  Module: {
    exportModelForInferencing: (destination) =>
      typeof destination === 'string' && !destination.startsWith('idb://')
        ? new WebtrainError('exportModelForInferencing in a worker: the destination must be an idb:// location (or omit it to get the bytes)')
        : null,
    exportMergedModel: (destination) =>
      typeof destination === 'string' && !destination.startsWith('idb://')
        ? new WebtrainError('exportMergedModel in a worker: the destination must be an idb:// location (or omit it to get the bytes)')
        : null,
    exportLoraAdapter: (destination) =>
      typeof destination === 'string' && !destination.startsWith('idb://')
        ? new WebtrainError('exportLoraAdapter in a worker: the destination must be an idb:// location (or omit it to get the bytes)')
        : null,
  },
};

/** Adds PROXIED[kind]'s methods to cls: each sends (prefix + name, args) to the object in the worker. */
function addMethods(cls, kind, prefix) {
  for (const name of PROXIED[kind].methods) {
    const guard = GUARDS[kind]?.[name];
    Object.defineProperty(cls.prototype, name, {
      value(...args) {
        const err = guard?.(...args);
        return err ? Promise.reject(err) : this._call(prefix + name, ...args);
      },
      writable: true,
      configurable: true,
    });
  }
}

/** A member object of a proxy (state.parameters): its calls go through the owner, path-prefixed. */
class RemoteMember {
  #owner;
  constructor(owner) {
    this.#owner = owner;
  }
  _call(path, ...args) {
    return this.#owner._call(path, ...args);
  }
}

/** The proxy class of `kind` (web/proxies.js PROXIED). */
function proxyClass(kind) {
  const nested = Object.entries(PROXIED[kind].nested ?? {}).map(([member, k]) => {
    const cls = class extends RemoteMember {};
    addMethods(cls, k, `${member}.`);
    Object.defineProperty(cls, 'name', { value: `Remote${k}` });
    return [member, cls];
  });
  const cls = class extends Remote {
    constructor(w, id) {
      super(w, id);
      for (const [member, Member] of nested) this[member] = new Member(this);
    }
  };
  addMethods(cls, kind, '');
  Object.defineProperty(cls, 'name', { value: `Remote${kind}` });
  return cls;
}

/** Worker object kind -> its proxy class. */
export const KINDS = Object.fromEntries(Object.keys(STATICS).map((k) => [k, proxyClass(k)]));

export class WebtrainWorker extends EventTarget {
  #worker;
  #pending = new Map(); // id -> { resolve, reject, onProgress }
  #nextId = 1;
  #remotes = new Map(); // worker object id -> WeakRef of its Remote (one proxy per object)
  // A proxy collected without release(): the worker drops the object too ({ drop }).
  #collected = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((id) => this.#forget(id)) : null;
  #dead = null;

  constructor(worker) {
    super();
    this.#worker = worker;
    worker.onmessage = (ev) => this.#receive(ev.data);
    worker.onerror = (ev) => {
      ev.preventDefault?.();
      this.#fail(new WebtrainError(`the webtrain worker failed: ${ev.message || 'could not load web/worker.js (is it served, with a JavaScript MIME type?)'}`));
    };
    worker.onmessageerror = () => this.#fail(new WebtrainError('the webtrain worker sent a message that could not be read'));
    const statics = (names) => Object.fromEntries(names.map((n) => [n.split('.').pop(), (...args) => this.#static(n, args)]));
    this.CheckpointState = {
      loadCheckpoint: (src, opts) => {
        let o, onProgress;
        try {
          [o, onProgress] = progressOption(opts, LOAD_OPTIONS, 'loadCheckpoint');
        } catch (err) {
          return Promise.reject(err);
        }
        return this.#static('CheckpointState.loadCheckpoint', [location(src), o], onProgress);
      },
      saveCheckpoint: (state, dest, opts) => {
        if (typeof dest === 'string' && !dest.startsWith('idb://')) return Promise.reject(new WebtrainError('saveCheckpoint in a worker: the destination must be an idb:// location (or null to get the bytes)'));
        return this.#static('CheckpointState.saveCheckpoint', [state, dest ?? null, opts]);
      },
    };
    this.Module = {
      create: (t, s, e, opts) => {
        let o, onProgress;
        try {
          [o, onProgress] = progressOption(externalOption(opts), MODULE_OPTIONS, 'Module.create');
        } catch (err) {
          return Promise.reject(err);
        }
        return this.#static('Module.create', [location(t), s, e === undefined ? undefined : location(e), o], onProgress);
      },
    };
    this.Optimizer = { create: (o, m, opts) => this.#static('Optimizer.create', [location(o), m, externalOption(opts)]) };
    this.LinearLRScheduler = { create: (...args) => this.#static('LinearLRScheduler.create', args) };
    this.InferenceSession = { create: (m, o) => this.#static('InferenceSession.create', [location(m), externalOption(o)]) };
    this.artifacts = {
      LossType,
      OptimType,
      generateArtifacts: (model, options = {}) => {
        if (options.loss && typeof options.loss === 'function') {
          return Promise.reject(new WebtrainError('generateArtifacts in a worker: an onnxblock.Block loss cannot be sent to a worker; generate the artifacts on the main thread and pass the bytes'));
        }
        return this.#static('artifacts.generateArtifacts', [location(model), externalOption(options)]);
      },
    };
    this.idb = statics(IDB_FUNCTIONS.map((n) => `idb.${n}`));
  }

  /** What a model or checkpoint declares (js/inspect.js), read in the worker. */
  inspect(source, options) {
    try {
      checkOptions(options, MODEL_OPTIONS, 'inspect');
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#static('inspect', [location(source), externalOption(options)]);
  }

  /** The SIMD flavour the worker's core runs (e.g. 'wasm-simd128'). */
  simdName() {
    return this.#static('simdName', []);
  }

  /** What the worker's core runs with: { threads, simd, crossOriginIsolated, build: 'single' | 'threaded' } (see runtimeInfo()). */
  runtimeInfo() {
    return this.#static('runtimeInfo', []);
  }

  /** Runs many training steps in the worker; see the comment at the top of this file. */
  trainEpochs(options = {}) {
    try {
      checkOptions(options, TRAIN_EPOCHS_OPTIONS, 'trainEpochs'); // (onProgress and signal stay on this side)
    } catch (err) {
      return Promise.reject(err);
    }
    const { onProgress, signal, ...rest } = options ?? {};
    return this.#loop('trainEpochs', [rest], onProgress ? (p) => void onProgress(p) : null, signal);
  }

  /**
   * fit (js/loop.js) in the worker: the callbacks run here, on the worker's progress messages
   * (a false from one stops the loop at its next batch); metrics are built-in names only.
   */
  fit(module, optimizer, options = {}) {
    const { callbacks = {}, signal, ...rest } = options ?? {};
    try {
      checkOptions(options, FIT_OPTIONS, 'fit');
      checkOptions(callbacks, CALLBACKS, "fit's callbacks"); // (they stay on this side)
    } catch (err) {
      return Promise.reject(err);
    }
    const metrics = Array.isArray(rest.metrics) ? rest.metrics : Object.values(rest.metrics ?? {});
    if (metrics.some((m) => typeof m === 'function')) return Promise.reject(new WebtrainError("fit in a worker: a metric function cannot be sent to a worker; use built-in metrics ('accuracy') or run fit on this thread"));
    const path = typeof rest.checkpoint === 'string' ? rest.checkpoint : rest.checkpoint?.path;
    if (typeof path === 'string' && !path.startsWith('idb://')) return Promise.reject(new WebtrainError('fit in a worker: checkpoint.path must be an idb:// location'));
    const onProgress = ({ type, ...detail }) => (type === 'epoch' ? callbacks.onEpochEnd?.(detail) : callbacks.onBatchEnd?.(detail));
    // With an onEpochEnd here, the worker waits for its answer at the end of each epoch.
    return this.#loop('fit', [module, optimizer, rest, { waitEpochEnd: !!callbacks.onEpochEnd }], onProgress, signal);
  }

  /** A training loop in the worker: progress to onProgress and as events; signal -> { cancel }; a false from onProgress -> { stop }. */
  #loop(name, args, onProgress, signal) {
    if (signal?.aborted) return Promise.reject(abortError(name));
    const p = this.#static(name, args, onProgress);
    if (signal) {
      const id = this.#nextId - 1;
      const onAbort = () => this.#worker.postMessage({ cancel: id });
      signal.addEventListener('abort', onAbort, { once: true });
      p.finally(() => signal.removeEventListener('abort', onAbort)).catch(() => {});
    }
    return p;
  }

  /** Stops the worker; pending calls reject. */
  terminate() {
    this.#worker.terminate();
    this.#fail(new WebtrainError('the webtrain worker was terminated'));
  }

  /** @internal */
  _send(msg, args) {
    return this.#post(msg, args, null);
  }

  _init(options) {
    return this.#post({ op: 'init', options }, [], null);
  }

  #static(name, args, onProgress = null) {
    return this.#post({ op: 'static', name, args }, args, onProgress);
  }

  #post(msg, args, onProgress) {
    if (this.#dead) return Promise.reject(this.#dead);
    const id = this.#nextId++;
    const moved = new Set();
    let encoded;
    try {
      encoded = args.map((a) => encode(a, argEncoding(moved)));
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, onProgress });
      try {
        this.#worker.postMessage({ ...msg, id, args: encoded }, [...moved]);
      } catch (err) {
        this.#pending.delete(id);
        reject(new WebtrainError(`cannot send to the webtrain worker: ${err.message}`));
      }
    });
  }

  #receive(msg) {
    if (msg.progress !== undefined) {
      const p = this.#pending.get(msg.progress);
      if (p?.onProgress) {
        // A progress message with `wait` is answered ({ answer, stop }); otherwise false -> { stop }.
        const stop = (v) => {
          if (this.#dead) return;
          if (msg.wait) this.#worker.postMessage({ answer: msg.progress, stop: v === false });
          else if (v === false) this.#worker.postMessage({ stop: msg.progress });
        };
        const rethrow = (err) => {
          stop(undefined);
          setTimeout(() => {
            throw err;
          });
        };
        try {
          const r = p.onProgress(msg.detail);
          if (r && typeof r.then === 'function') r.then(stop, rethrow);
          else stop(r);
        } catch (err) {
          rethrow(err);
        }
      }
      this.dispatchEvent(new CustomEvent('progress', { detail: msg.detail }));
      return;
    }
    const p = this.#pending.get(msg.id);
    if (!p) return;
    this.#pending.delete(msg.id);
    if (msg.error) {
      const { name, message, code, status, history } = msg.error;
      const e = new (Object.hasOwn(ERRORS, name) ? ERRORS[name] : Error)(message);
      if (e.name !== name) e.name = name;
      if (code !== undefined) e.code = code;
      if (status !== undefined) e.status = status;
      if (history !== undefined) e.history = history;
      p.reject(e);
    } else {
      p.resolve(this.#decode(msg.value));
    }
  }

  #decode(v) {
    return decode(v, ({ __ref: id, kind }) => {
      let r = this.#remotes.get(id)?.deref();
      if (!r) {
        r = new KINDS[kind](this, id);
        this.#remotes.set(id, new WeakRef(r));
        this.#collected?.register(r, id);
      }
      return r;
    });
  }

  #forget(id) {
    if (this.#remotes.get(id)?.deref()) return; // a newer proxy of the same object
    this.#remotes.delete(id);
    if (!this.#dead) this.#worker.postMessage({ drop: id });
  }

  #fail(err) {
    this.#dead ??= err;
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }
}

function abortError(name) {
  const e = new WebtrainError(`${name}: cancelled before it started`);
  e.code = 'AbortError';
  return e;
}

/** Arguments to the worker (web/wire.js): remote objects by id, Tensors as plain data, transfer() marks honoured. */
const argEncoding = (transfer) => ({
  ref: (v) => (v instanceof Remote ? { __ref: v.__ref } : null),
  isTensor: (v) => v instanceof Tensor || (!ArrayBuffer.isView(v) && 'dims' in v && ArrayBuffer.isView(v.data)),
  move: (v) => marked.has(v) || (v.data !== undefined && marked.has(v.data)),
  transfer,
});

/**
 * Starts a worker running webtrain and loads the core in it. Options: { wasmUrl } (where the
 * .wasm is, if not next to dist/webtrain-core.mjs), { threads, threadedUrl, simd } (as init()'s: the
 * worker loads the threaded build where it is crossOriginIsolated), { workerUrl } (where web/worker.js, bundled
 * as an entry point of its own, is served, if a bundler did not follow
 * new Worker(new URL('./worker.js', import.meta.url))). Where either cannot be loaded, rejects
 * with a WebtrainError naming the option to set.
 */
export async function worker(options = {}) {
  checkOptions(options, WORKER_OPTIONS, 'worker');
  options ??= {};
  if (typeof Worker === 'undefined') throw new WebtrainError('webtrain.worker() needs Web Workers (a browser page)');
  const url = options.workerUrl ? location(options.workerUrl) : null;
  let w;
  try {
    // The default as one expression bundlers recognize (Vite, webpack 5 and Parcel bundle the worker).
    w = url ? new Worker(url, { type: 'module' }) : new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  } catch (err) {
    throw startError(url, err.message); // an invalid or cross-origin URL; import.meta.url empty (esbuild's iife format)
  }
  let failedToStart = false; // an 'error' event before the core is loaded: the script did not load or run
  w.addEventListener('error', () => {
    failedToStart = true;
  });
  const host = new WebtrainWorker(w);
  const initOptions = {};
  if (options.wasmUrl) initOptions.wasmUrl = location(options.wasmUrl);
  if (options.threadedUrl) initOptions.threadedUrl = location(options.threadedUrl);
  if (options.threads !== undefined) initOptions.threads = options.threads; // the worker's init() checks it
  if (options.simd !== undefined) initOptions.simd = options.simd; // (likewise)
  try {
    await host._init(initOptions);
  } catch (err) {
    w.terminate();
    if (failedToStart) throw startError(url, await whyNotStarted(url ?? defaultWorkerUrl()));
    if (err.code !== WASM_ERROR) throw err;
    const e = new WebtrainError(err.message.replaceAll(WASM_OPTION, 'worker({ wasmUrl })').replaceAll(THREADED_OPTION, 'worker({ threadedUrl })'));
    e.code = err.code;
    throw e;
  }
  return host;
}

/** web/worker.js next to this module, or null where import.meta.url is empty. */
function defaultWorkerUrl() {
  // Not new URL('./worker.js', import.meta.url): bundlers would emit the unbundled file as an asset.
  const moduleUrl = import.meta.url;
  return urlOrNull('worker.js', moduleUrl);
}

/** What is served at the worker script's URL, when the script did not start. */
async function whyNotStarted(where) {
  if (!where) return 'the script did not start';
  try {
    const res = await fetch(where);
    const type = res.headers.get('content-type') ?? '';
    await res.body?.cancel();
    if (!res.ok) return `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
    if (!/javascript|ecmascript/i.test(type)) return `it is served as '${type}', not as JavaScript`;
    return 'the script or a module it imports failed to load or run (see the console)';
  } catch (err) {
    return `fetching it fails: ${err.message}`;
  }
}

/** The error of a worker script (at `url`; null: the default) that did not start: why, and the option to set. */
function startError(url, why) {
  const where = url ?? defaultWorkerUrl();
  const bundlers = url
    ? ''
    : "; a bundler that does not follow new Worker(new URL('./worker.js', import.meta.url)) (esbuild) needs it: add node_modules/webtrain/web/worker.js to esbuild's entryPoints as 'worker' (then it is found next to your bundle) or set workerUrl to where that bundle is served";
  return new WebtrainError(`cannot start webtrain's worker${where ? ` from ${where}` : ''}: ${why} (worker({ workerUrl }) tells webtrain where web/worker.js, bundled as an entry point of its own, is served${bundlers})`);
}
