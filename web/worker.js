// The Web Worker side of webtrain.worker() (protocol: see the comment at the top of
// web/worker-host.js). Runs the ordinary synchronous API; keeps the objects it creates in a
// table and answers calls on them by id. trainEpochs is the package's loop (js/loop.js).
import * as api from '../js/index.js';
import * as idb from './idb.js';
import { init } from './init.js';
import { encode, decode } from './wire.js';
import { STATICS, IDB_FUNCTIONS } from './proxies.js';

const wt = { ...api, idb, init };

const { LinearLRScheduler, Tensor, artifacts, WebtrainError, trainEpochs } = api;

const objects = new Map(); // id -> object
const ids = new WeakMap(); // object -> id
let nextId = 1;
const aborts = new Map(); // call id -> AbortController of a trainEpochs call in progress

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
    objects.set(id, v);
  }
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
    const r = member?.call(target); // (a LinearLRScheduler has nothing to free: its reference goes)
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

/** trainEpochs (js/loop.js) in the worker: progress posted to the host, cancelled by its { cancel } message. */
function trainInWorker(options, callId) {
  const controller = new AbortController();
  aborts.set(callId, controller);
  const progress = (detail) => postMessage({ progress: callId, detail });
  return trainEpochs({ ...options, onProgress: progress, signal: controller.signal }).finally(() => aborts.delete(callId));
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  if (msg.cancel !== undefined) {
    aborts.get(msg.cancel)?.abort();
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
      const args = decodeArgs(msg.args);
      result = msg.name === 'trainEpochs' ? await trainInWorker(args[0] ?? {}, id) : await fn(...args);
    } else if (msg.op === 'call') {
      result = await callMethod(deref(msg.ref), msg.path, decodeArgs(msg.args));
    } else {
      throw new WebtrainError(`worker: unknown message '${msg.op}'`);
    }
    const transfer = new Set();
    const value = encode(result, resultEncoding(transfer));
    postMessage({ id, value }, [...transfer]);
  } catch (err) {
    postMessage({ id, error: { name: err?.name ?? 'Error', message: err?.message ?? String(err), code: err?.code } });
  }
};
