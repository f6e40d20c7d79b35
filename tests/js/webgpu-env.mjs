// The WebGPU the webgpu backend's tests run on: the `webgpu` package's Dawn, which finds a real
// GPU through Vulkan where there is one, else Chromium's SwiftShader (a CPU Vulkan driver that
// Debian's chromium package ships); and what the op-by-op tests share. Not a test file itself.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { InferenceSession } from '../../js/index.js';

const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';
if (!process.env.VK_ICD_FILENAMES && !process.env.VK_DRIVER_FILES && existsSync(SWIFTSHADER)) process.env.VK_ICD_FILENAMES = SWIFTSHADER;
process.env.XDG_RUNTIME_DIR ??= tmpdir();

const { create } = await import('webgpu');

/** A GPU object (Dawn's navigator.gpu) for init({ backend: 'webgpu', gpu }). */
export const gpu = create([]);

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

/**
 * Counts, until restore(), calls of the device's methods `names` ('queue.writeBuffer': its
 * queue's), queue.submit, buffers' mapAsync (readBytes: the mapped buffers' sizes) and compute
 * passes' dispatchWorkgroups: { counts, restore }.
 */
export function countCalls(device, names = []) {
  const counts = { submit: 0, mapAsync: 0, readBytes: 0, dispatchWorkgroups: 0 };
  const probe = device.createBuffer({ size: 4, usage: 0x8 }); // COPY_DST: its class, for mapAsync
  const bufferClass = Object.getPrototypeOf(probe);
  probe.destroy();
  const passClass = Object.getPrototypeOf(device.createCommandEncoder().beginComputePass());
  const wrap = (obj, name, also) => {
    const had = Object.prototype.hasOwnProperty.call(obj, name);
    const f = obj[name];
    obj[name] = function (...a) {
      counts[name] = (counts[name] ?? 0) + 1; // (a queue method counts under its own name)
      also?.(this);
      return f.apply(this, a);
    };
    return () => (had ? (obj[name] = f) : delete obj[name]);
  };
  const restores = [
    ...names.map((n) => (n.startsWith('queue.') ? wrap(device.queue, n.slice(6)) : wrap(device, n))),
    wrap(device.queue, 'submit'),
    wrap(bufferClass, 'mapAsync', (buffer) => (counts.readBytes += buffer.size)),
    wrap(passClass, 'dispatchWorkgroups'),
  ];
  return { counts, restore: () => restores.forEach((r) => r()) };
}
