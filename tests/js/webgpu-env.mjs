// The WebGPU the webgpu backend's tests run on: the `webgpu` package's Dawn, which finds a real
// GPU through Vulkan where there is one, else Chromium's SwiftShader (a CPU Vulkan driver that
// Debian's chromium package ships). Not a test file itself.
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';

const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';
if (!process.env.VK_ICD_FILENAMES && !process.env.VK_DRIVER_FILES && existsSync(SWIFTSHADER)) process.env.VK_ICD_FILENAMES = SWIFTSHADER;
process.env.XDG_RUNTIME_DIR ??= tmpdir();

const { create } = await import('webgpu');

/** A GPU object (Dawn's navigator.gpu) for init({ backend: 'webgpu', gpu }). */
export const gpu = create([]);

/**
 * Counts, until restore(), calls of the device's methods `names` ('queue.writeBuffer': its
 * queue's), queue.submit, buffers' mapAsync (readBytes: the mapped buffers' sizes) and compute
 * passes' dispatchWorkgroups: { counts, order (the submits and mapAsyncs by name, in call
 * order), restore }.
 */
export function countCalls(device, names = []) {
  const counts = { submit: 0, mapAsync: 0, readBytes: 0, dispatchWorkgroups: 0 };
  const order = [];
  const probe = device.createBuffer({ size: 4, usage: 0x8 }); // COPY_DST: its class, for mapAsync
  const bufferClass = Object.getPrototypeOf(probe);
  probe.destroy();
  const passClass = Object.getPrototypeOf(device.createCommandEncoder().beginComputePass());
  const wrap = (obj, name, also) => {
    const had = Object.prototype.hasOwnProperty.call(obj, name);
    const f = obj[name];
    obj[name] = function (...a) {
      counts[name] = (counts[name] ?? 0) + 1; // (a queue method counts under its own name)
      if (name === 'submit' || name === 'mapAsync') order.push(name);
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
  return { counts, order, restore: () => restores.forEach((r) => r()) };
}
