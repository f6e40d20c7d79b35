// webtrain.worker()'s proxies (web/worker-host.js) are built from the lists of web/proxies.js:
// this test fails when a public member of a real class has no proxy and is not listed as not
// proxied (with the reason), when a proxy names a member the class does not have, and when a
// proxy class lacks a listed method.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as api from '../../js/index.js';
import { PROXIED, NOT_PROXIED, STATICS, IDB_FUNCTIONS } from '../../web/proxies.js';
import * as idb from '../../web/idb.js';
import { KINDS, WebtrainWorker } from '../../web/worker-host.js';

/** Public members (methods and getters) of a class's prototype chain, Object's excluded. */
function publicMembers(cls) {
  const names = new Set();
  for (let p = cls.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const n of Object.getOwnPropertyNames(p)) if (n !== 'constructor' && !n.startsWith('_')) names.add(n);
  }
  return names;
}

const publicStatics = (cls) => Object.getOwnPropertyNames(cls).filter((n) => !['length', 'name', 'prototype'].includes(n) && !n.startsWith('_') && typeof cls[n] === 'function');

// Real objects for the member classes (Parameters, Properties): from a state's prototype chain.
async function memberClasses() {
  const { artifacts, CheckpointState } = api;
  const art = await artifacts.generateArtifacts(new URL('../golden/cases/mlp_ce_adamw/model.onnx', import.meta.url).pathname, { requiresGrad: ['fc1.weight'], loss: 'CrossEntropyLoss' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  try {
    return { Parameters: state.parameters.constructor, Properties: state.properties.constructor };
  } finally {
    state.release();
  }
}

test('every public member of the real classes is proxied or listed as not proxied, with a reason', async () => {
  const classes = { ...(await memberClasses()) };
  for (const k of Object.keys(STATICS)) classes[k] = api[k];
  assert.deepEqual(Object.keys(PROXIED).sort(), Object.keys(classes).sort(), 'web/proxies.js PROXIED lists these classes');
  for (const [kind, cls] of Object.entries(classes)) {
    const members = publicMembers(cls);
    const proxied = new Set([...PROXIED[kind].methods, ...Object.keys(PROXIED[kind].nested ?? {})]);
    const skipped = { ...NOT_PROXIED['*'], ...NOT_PROXIED[kind] };
    for (const m of members) {
      if (proxied.has(m)) continue;
      assert.ok(m in skipped, `${kind}.${m} has no proxy in web/proxies.js: add it to PROXIED.${kind}.methods, or to NOT_PROXIED.${kind} with the reason`);
      assert.ok(typeof skipped[m] === 'string' && skipped[m].length > 10, `NOT_PROXIED ${kind}.${m}: give the reason`);
    }
    for (const m of proxied) {
      // release() on a scheduler only drops the worker's reference (the class has nothing to free).
      if (m === 'release' && !members.has(m)) continue;
      assert.ok(members.has(m) || (m in (PROXIED[kind].nested ?? {})), `PROXIED.${kind} names '${m}', which ${kind} does not have`);
      assert.ok(!(m in (NOT_PROXIED[kind] ?? {})), `${kind}.${m} is both proxied and not proxied`);
    }
  }
});

test('the proxy classes have the listed methods, nested members included', () => {
  const sent = [];
  const w = { _send: (msg) => (sent.push(msg), Promise.resolve()) };
  for (const [kind, cls] of Object.entries(KINDS)) {
    const r = new cls(w, 7);
    for (const m of PROXIED[kind].methods) assert.equal(typeof r[m], 'function', `Remote${kind}.${m}`);
    for (const [member, k] of Object.entries(PROXIED[kind].nested ?? {})) {
      for (const m of PROXIED[k].methods) assert.equal(typeof r[member][m], 'function', `Remote${kind}.${member}.${m}`);
    }
  }
  const state = new KINDS.CheckpointState(w, 3);
  state.parameters.get('fc1.weight');
  new KINDS.Module(w, 4).run(1, 2);
  assert.deepEqual(sent, [
    { op: 'call', ref: 3, path: 'parameters.get', args: ['fc1.weight'] },
    { op: 'call', ref: 4, path: 'run', args: [1, 2] },
  ]);
});

test('the worker host has every static of the real classes', () => {
  const w = new WebtrainWorker({ postMessage() {}, terminate() {} });
  for (const [kind, names] of Object.entries(STATICS)) {
    const real = api[kind];
    const expected = publicStatics(real);
    if (kind === 'LinearLRScheduler') expected.push('create'); // its constructor, as a function: constructors cannot be async
    assert.deepEqual([...names].sort(), [...new Set(expected)].sort(), `STATICS.${kind} lists ${kind}'s statics`);
    for (const n of names) assert.equal(typeof w[kind][n], 'function', `worker.${kind}.${n}`);
  }
  for (const n of IDB_FUNCTIONS) {
    assert.equal(typeof idb[n], 'function', `web/idb.js has no ${n}`);
    assert.equal(typeof w.idb[n], 'function', `worker.idb.${n}`);
  }
  w.terminate();
});
