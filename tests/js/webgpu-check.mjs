// Checks of the webgpu backend against the wasm backend, shared by the webgpu test files: a
// model run on both (InferenceSession), single-node models, deterministic test values, and the
// per-element tolerance check of the policy in docs/architecture.md. Not a test file itself.
import assert from 'node:assert/strict';
import { InferenceSession, Tensor } from '../../js/index.js';
import { onnxModel } from './onnx-writer.mjs';
import { gpu } from './webgpu-env.mjs';

export const EPS = 2 ** -24; // half an ulp of 1 in float32

/** Deterministic values in [-1, 1) (not multiples of a power of two: products round). */
export const fill = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 0.999);

/** outputs of `model` for `feeds` on both backends: { cpu, gpu } (each { name: Tensor }). */
export async function both(model, feeds) {
  const c = await InferenceSession.create(model, { backend: 'wasm' });
  const g = await InferenceSession.create(model, { backend: 'webgpu', gpu });
  try {
    assert.equal(g.backend, 'webgpu');
    return { cpu: await c.run(feeds), gpu: await g.run(feeds) };
  } finally {
    c.release();
    g.release();
  }
}

export const one = (op, inputs, attrs, extra = {}) =>
  onnxModel({
    nodes: [{ op, inputs: inputs.map((v) => v.name), outputs: ['y'], attrs, domain: extra.domain }],
    inputs: inputs.filter((v) => !v.init).map(({ name, dims }) => ({ name, dims })),
    initializers: inputs.filter((v) => v.init).map(({ name, dims, data }) => ({ name, dims, data })),
    outputs: [{ name: 'y' }],
    opset: extra.opset,
  });

/** A model of `nodes` over float inputs (`init` ones as initializers) with the named outputs. */
export const graph = (nodes, inputs, outputs, opset) =>
  onnxModel({
    nodes,
    inputs: inputs.filter((v) => !v.init).map(({ name, dims }) => ({ name, dims })),
    initializers: inputs.filter((v) => v.init).map(({ name, dims, data }) => ({ name, dims, data })),
    outputs: outputs.map((o) => (typeof o === 'string' ? { name: o } : o)),
    opset,
  });

export const tensorOf = (v) => new Tensor('float32', v.data, v.dims);
export const feedsOf = (inputs) => Object.fromEntries(inputs.filter((v) => !v.init).map((v) => [v.name, tensorOf(v)]));
export const value = (name, dims, seed, init = false) => ({ name, dims, data: fill(dims.reduce((a, b) => a * b, 1), seed), init });

/** |gpu - cpu| <= atol + rtol |cpu| for every element of every output of `model`. */
export async function close(model, feeds, atol, rtol, what) {
  const r = await both(model, feeds);
  for (const name of Object.keys(r.cpu)) {
    assert.deepEqual(r.gpu[name].dims, r.cpu[name].dims, `${what}: ${name} dims`);
    r.gpu[name].data.forEach((v, i) => {
      const c = r.cpu[name].data[i];
      assert.ok(Object.is(v, c) || Math.abs(v - c) <= atol + rtol * Math.abs(c), `${what}: ${name}[${i}] ${v} vs ${c}`);
    });
  }
}

