// The Web Worker side of webtrain.worker() (protocol: see the comment at the top of
// web/worker-host.js). Runs the ordinary synchronous API; keeps the objects it creates in a
// table and answers calls on them by id.
import * as api from '../js/index.js';
import * as idb from './idb.js';
import { init } from './init.js';

const wt = { ...api, idb, init };

const { CheckpointState, Module, Optimizer, LinearLRScheduler, InferenceSession, Tensor, artifacts, WebtrainError } = api;

const objects = new Map(); // id -> object
const ids = new WeakMap(); // object -> id
let nextId = 1;
const cancelled = new Set(); // call ids whose cancellation was requested

function kindOf(v) {
  if (v instanceof CheckpointState) return 'CheckpointState';
  if (v instanceof Module) return 'Module';
  if (v instanceof Optimizer) return 'Optimizer';
  if (v instanceof LinearLRScheduler) return 'LinearLRScheduler';
  if (v instanceof InferenceSession) return 'InferenceSession';
  return null;
}

function ref(v) {
  let id = ids.get(v);
  if (!id) {
    id = nextId++;
    ids.set(v, id);
    objects.set(id, v);
  }
  return { __ref: id, kind: kindOf(v) };
}

function deref(id) {
  const o = objects.get(id);
  if (!o) throw new WebtrainError(`worker: object #${id} does not exist (released?)`);
  return o;
}

/** Arguments from the host: { __ref } -> object, { __tensor } -> Tensor. */
function decode(v) {
  if (Array.isArray(v)) return v.map(decode);
  if (v && typeof v === 'object' && !ArrayBuffer.isView(v) && !(v instanceof ArrayBuffer)) {
    if ('__ref' in v) return deref(v.__ref);
    if ('__tensor' in v) return new Tensor(v.__tensor.type, v.__tensor.data, v.__tensor.dims);
    if (Object.getPrototypeOf(v) === Object.prototype) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decode(x)]));
  }
  return v;
}

/** Results to the host; typed arrays are fresh copies made by the API, so their buffers move. */
function encode(v, transfer) {
  if (v === null || typeof v !== 'object') return v;
  if (kindOf(v)) return ref(v);
  if (v instanceof Tensor) {
    if (v.data.buffer instanceof ArrayBuffer) transfer.add(v.data.buffer);
    return { __tensor: { type: v.type, data: v.data, dims: [...v.dims] } };
  }
  if (ArrayBuffer.isView(v)) {
    if (v.buffer instanceof ArrayBuffer) transfer.add(v.buffer);
    return v;
  }
  if (v instanceof ArrayBuffer) {
    transfer.add(v);
    return v;
  }
  if (Array.isArray(v)) return v.map((x) => encode(x, transfer));
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, encode(x, transfer)]));
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x, transfer)]));
}

const statics = {
  'CheckpointState.loadCheckpoint': (src, opts) => CheckpointState.loadCheckpoint(src, opts),
  'CheckpointState.saveCheckpoint': (state, dest, opts) => CheckpointState.saveCheckpoint(state, dest, opts),
  'Module.create': (t, s, e) => Module.create(t, s, e),
  'Optimizer.create': (o, m) => Optimizer.create(o, m),
  'LinearLRScheduler.create': (o, w, t, lr) => new LinearLRScheduler(o, w, t, lr),
  'InferenceSession.create': (m) => InferenceSession.create(m),
  'artifacts.generateArtifacts': (m, o) => artifacts.generateArtifacts(m, o),
  'idb.list': (p) => idb.list(p),
  'idb.load': (n) => idb.load(n),
  'idb.save': (n, b) => idb.save(n, b),
  'idb.has': (n) => idb.has(n),
  'idb.delete': (n) => idb.delete(n),
  'idb.clear': (p) => idb.clear(p),
  simdName: async () => (await wt.init()).simdName(),
};

/** Instance calls: path 'run', 'parameters.get', ... on the object with that id. */
async function callMethod(obj, path, args) {
  const parts = path.split('.');
  let target = obj;
  for (const p of parts.slice(0, -1)) target = target[p];
  const name = parts[parts.length - 1];
  const member = target?.[name];
  if (name === 'release') {
    const r = member.call(target);
    objects.delete(ids.get(obj));
    return r;
  }
  if (typeof member === 'function') {
    const r = await member.apply(target, args);
    // Generators (parameters.entries(), keys(), ...) come back as arrays.
    if (r && typeof r.next === 'function' && typeof r[Symbol.iterator] === 'function') return [...r];
    return r === target ? undefined : r;
  }
  if (args.length) throw new WebtrainError(`worker: '${path}' is not a method`);
  return member; // a getter: size, isTraining, isLive
}

// Yields to the event loop (to receive cancel messages) without setTimeout's clamping.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
const yieldNow = () =>
  new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(0);
  });

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

async function trainEpochs(o, callId) {
  const { module, optimizer, scheduler } = o;
  if (!(module instanceof Module)) throw new WebtrainError('trainEpochs: module must be a Module of this worker');
  if (!(optimizer instanceof Optimizer)) throw new WebtrainError('trainEpochs: optimizer must be an Optimizer of this worker');
  const epochs = o.epochs ?? 1;
  const progressEvery = Math.max(1, o.progressEvery ?? 1);
  let plan; // epoch -> array of batches (arrays of inputs)
  if (o.batches) {
    plan = () => o.batches.map((b) => (Array.isArray(b) ? b : [b]));
  } else if (o.inputs) {
    const inputs = o.inputs.map((x) => (x instanceof Tensor ? x : ArrayBuffer.isView(x) ? new Tensor(x) : new Tensor(x.type, x.data, x.dims)));
    const n = inputs[0].dims[0];
    if (inputs.some((t) => t.dims[0] !== n)) throw new WebtrainError(`trainEpochs: every input needs the same number of samples along axis 0; got ${inputs.map((t) => t.dims[0]).join(', ')}`);
    const bs = o.batchSize ?? n;
    if (!Number.isInteger(bs) || bs <= 0) throw new WebtrainError(`trainEpochs: batchSize must be an integer > 0; got ${bs}`);
    plan = (epoch) => {
      const perm = o.shuffle ? permutation(n, (o.seed ?? 1) + epoch * 7919) : null;
      const out = [];
      for (let s = 0; s < n; s += bs) {
        const e = Math.min(n, s + bs);
        if (o.dropLast && e - s < bs) break;
        out.push(inputs.map((t) => (perm ? gather(t, perm.slice(s, e)) : rows(t, s, e))));
      }
      return out;
    };
  } else {
    throw new WebtrainError('trainEpochs: give inputs ([tensors with samples along axis 0] + batchSize) or batches ([[input, labels], ...])');
  }
  const first = plan(0);
  const perEpoch = first.length;
  const totalSteps = perEpoch * epochs;
  const losses = new Float32Array(totalSteps);
  const t0 = performance.now();
  let lastYield = t0;
  let step = 0;
  module.train();
  for (let epoch = 0; epoch < epochs; epoch++) {
    const batches = epoch === 0 ? first : plan(epoch);
    let sum = 0;
    for (let b = 0; b < batches.length; b++) {
      const loss = lossValue(module.run(...batches[b]));
      optimizer.step();
      if (scheduler) scheduler.step();
      module.lazyResetGrad();
      losses[step] = loss;
      sum += loss;
      step++;
      const last = b === batches.length - 1;
      if (step % progressEvery === 0 || last) {
        postMessage({ progress: callId, detail: { step, totalSteps, epoch, epochs, batch: b + 1, batches: batches.length, loss, epochLoss: sum / (b + 1), epochDone: last, elapsedMs: performance.now() - t0 } });
      }
      if (performance.now() - lastYield > 30) {
        await yieldNow();
        lastYield = performance.now();
      }
      if (cancelled.has(callId)) {
        const e = new WebtrainError(`trainEpochs: cancelled after ${step} of ${totalSteps} steps`);
        e.code = 'AbortError';
        throw e;
      }
    }
  }
  return { steps: step, epochs, losses, lastLoss: losses[step - 1], elapsedMs: performance.now() - t0 };
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  if (msg.cancel !== undefined) {
    cancelled.add(msg.cancel);
    return;
  }
  const { id } = msg;
  try {
    let result;
    if (msg.op === 'init') {
      const core = await wt.init(msg.options ?? {});
      result = { simd: core.simdName() };
    } else if (msg.op === 'static') {
      const fn = statics[msg.name];
      if (!fn && msg.name !== 'trainEpochs') throw new WebtrainError(`worker: unknown function '${msg.name}'`);
      const args = decode(msg.args);
      result = msg.name === 'trainEpochs' ? await trainEpochs(args[0] ?? {}, id) : await fn(...args);
    } else if (msg.op === 'call') {
      result = await callMethod(deref(msg.ref), msg.path, decode(msg.args));
    } else {
      throw new WebtrainError(`worker: unknown message '${msg.op}'`);
    }
    const transfer = new Set();
    const value = encode(result, transfer);
    postMessage({ id, value }, [...transfer]);
  } catch (err) {
    postMessage({ id, error: { name: err?.name ?? 'Error', message: err?.message ?? String(err), code: err?.code } });
  } finally {
    cancelled.delete(id);
  }
};
