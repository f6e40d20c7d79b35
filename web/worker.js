// The Web Worker side of webtrain.worker() (protocol: see the comment at the top of
// web/worker-host.js). Runs the ordinary synchronous API; keeps the objects it creates in a
// table and answers calls on them by id. fit and trainEpochs are the package's loop (js/loop.js).
import * as api from '../js/index.js';
import * as idb from './idb.js';
import { init } from './init.js';
import { encode, decode, PROGRESS } from './wire.js';
import { STATICS, IDB_FUNCTIONS } from './proxies.js';

const wt = { ...api, idb, init };

const { LinearLRScheduler, Tensor, artifacts, WebtrainError, trainEpochs, fit } = api;

const objects = new Map(); // id -> object
const ids = new WeakMap(); // object -> id
let nextId = 1;
const aborts = new Map(); // call id -> AbortController of a training loop (trainEpochs, fit) in progress

/** The class (a key of web/proxies.js STATICS) of an object that stays in the worker, or null. */
function kindOf(v) {
  for (const kind of Object.keys(STATICS)) if (v instanceof api[kind]) return kind;
  return null;
}

function ref(v) {
  let id = ids.get(v);
  if (!id) {
    id = nextId++;
    ids.set(v, id);
  }
  objects.set(id, v); // (again, if the host had dropped its proxy)
  return { __ref: id, kind: kindOf(v) };
}

function deref(id) {
  const o = objects.get(id);
  if (!o) throw new WebtrainError(`worker: object #${id} does not exist (released?)`);
  return o;
}

/** Results to the host (web/wire.js); typed arrays are fresh copies made by the API, so their buffers move. */
const resultEncoding = (transfer) => ({
  ref: (v) => (kindOf(v) ? ref(v) : null),
  isTensor: (v) => v instanceof Tensor,
  move: (v) => (v.data?.buffer ?? v.buffer ?? v) instanceof ArrayBuffer,
  transfer,
});

/** Arguments from the host: { __ref } -> the worker's object, { __tensor } -> Tensor. */
const decodeArgs = (v) => decode(v, (r) => deref(r.__ref));

const statics = {
  // 'CheckpointState.loadCheckpoint', 'Module.create', ... (web/proxies.js STATICS); a
  // scheduler's 'create' is its constructor.
  ...Object.fromEntries(
    Object.entries(STATICS).flatMap(([kind, names]) =>
      names.map((n) => [`${kind}.${n}`, kind === 'LinearLRScheduler' && n === 'create' ? (...a) => new LinearLRScheduler(...a) : (...a) => api[kind][n](...a)]),
    ),
  ),
  ...Object.fromEntries(IDB_FUNCTIONS.map((n) => [`idb.${n}`, (...a) => idb[n](...a)])),
  'artifacts.generateArtifacts': (m, o) => artifacts.generateArtifacts(m, o),
  inspect: (source, o) => api.inspect(source, o),
  simdName: async () => (await wt.init()).simdName(),
  runtimeInfo: async () => {
    await wt.init();
    return api.runtimeInfo();
  },
};

/** Instance calls: path 'run', 'parameters.get', ... on the object with that id. */
async function callMethod(obj, path, args) {
  const parts = path.split('.');
  let target = obj;
  for (const p of parts.slice(0, -1)) target = target[p];
  const name = parts[parts.length - 1];
  const member = target?.[name];
  // A released object stays in the table until the host's proxy is collected ({ drop }): a call
  // on it gets the error the object itself gives ("the module was released"), a second
  // release() does nothing, as on the main thread.
  if (name === 'release') return member?.call(target); // (a LinearLRScheduler has nothing to free)
  if (typeof member === 'function') {
    const r = await member.apply(target, args);
    // Generators (parameters.entries(), keys(), ...) come back as arrays.
    if (r && typeof r.next === 'function' && typeof r[Symbol.iterator] === 'function') return [...r];
    return r === target ? undefined : r;
  }
  if (args.length) throw new WebtrainError(`worker: '${path}' is not a method`);
  return member; // a getter: size, isTraining, isLive
}

const stops = new Set(); // call ids of fit calls the host asked to stop (a callback returned false)
const answers = new Map(); // call id -> resolve(stop) of a progress message waiting for the host's answer

/**
 * The training loops (js/loop.js) in the worker, by name: progress posted to the host,
 * cancelled by its { cancel } message; fit's callbacks stop the loop after the host's { stop }.
 */
const LOOPS = {
  trainEpochs: ([options = {}], signal, post) => trainEpochs({ ...options, onProgress: post(null), signal }),
  fit: ([module, optimizer, options = {}, { waitEpochEnd = false } = {}], signal, post, callId) => {
    const report = (type) => (detail) => (post(type)(detail), !stops.has(callId));
    // The host's onEpochEnd answers before the next epoch starts.
    const onEpochEnd = !waitEpochEnd
      ? report('epoch')
      : (detail) => {
          const answer = new Promise((resolve) => answers.set(callId, resolve));
          postMessage({ progress: callId, detail: { type: 'epoch', ...detail }, wait: true });
          return answer.then((stop) => !stop && !stops.has(callId));
        };
    const onBatchEnd = report('batch');
    return fit(module, optimizer, { ...options, signal, callbacks: { onBatchEnd, onEpochEnd } });
  },
};

function loopInWorker(name, args, callId) {
  const controller = new AbortController();
  aborts.set(callId, controller);
  const post = (type) => (detail) => postMessage({ progress: callId, detail: type ? { type, ...detail } : detail });
  return LOOPS[name](args, controller.signal, post, callId).finally(() => {
    aborts.delete(callId);
    stops.delete(callId);
  });
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  if (msg.cancel !== undefined) {
    aborts.get(msg.cancel)?.abort();
    return;
  }
  if (msg.answer !== undefined) {
    answers.get(msg.answer)?.(msg.stop);
    answers.delete(msg.answer);
    return;
  }
  if (msg.drop !== undefined) {
    // The host's proxy was collected: the object goes with it, unless another object holds it
    // (an optimizer its module); what it holds in the heap is freed when it is collected here.
    objects.delete(msg.drop);
    return;
  }
  if (msg.stop !== undefined) {
    if (aborts.has(msg.stop)) stops.add(msg.stop);
    return;
  }
  const { id } = msg;
  try {
    let result;
    if (msg.op === 'init') {
      const core = await wt.init(msg.options ?? {});
      result = { simd: core.simdName(), runtime: api.runtimeInfo() };
    } else if (msg.op === 'static') {
      const fn = statics[msg.name];
      const loop = Object.hasOwn(LOOPS, msg.name);
      if (!fn && !loop) throw new WebtrainError(`worker: unknown function '${msg.name}'`);
      // an onProgress left on the host (loadCheckpoint, Module.create): posted to it as { progress: id }
      const args = decodeArgs(msg.args).map((a) => (a?.onProgress === PROGRESS ? { ...a, onProgress: (detail) => postMessage({ progress: id, detail }) } : a));
      result = loop ? await loopInWorker(msg.name, args, id) : await fn(...args);
    } else if (msg.op === 'call') {
      result = await callMethod(deref(msg.ref), msg.path, decodeArgs(msg.args));
    } else {
      throw new WebtrainError(`worker: unknown message '${msg.op}'`);
    }
    const transfer = new Set();
    const value = encode(result, resultEncoding(transfer));
    postMessage({ id, value }, [...transfer]);
  } catch (err) {
    // (status: a fetch's HTTP status; code: 'AbortError', ...; history: fit's so far)
    postMessage({ id, error: { name: err?.name ?? 'Error', message: err?.message ?? String(err), code: err?.code, status: err?.status, history: err?.history } });
  }
};
