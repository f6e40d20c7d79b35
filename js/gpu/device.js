// The WebGPU device the webgpu backend runs on: opened once per init() from the `gpu` option
// (any GPU object: navigator.gpu, or create([]) of the `webgpu` package in Node), else the
// page's navigator.gpu, else, in Node, the `webgpu` package when it is installed. Validation
// errors are never left to the console: every build and run of a program is inside an error
// scope (js/gpu/program.js), and an error nothing caught (uncapturederror) or a lost device
// fails the next call with its message.
import { WebtrainError } from '../core.js';
import { importPackage, isNode } from '../node-builtin.js';

// The WebGPU flags this backend uses (the globals GPUBufferUsage / GPUMapMode are not defined
// in Node unless the `webgpu` package's globals are installed).
export const Usage = Object.freeze({ MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 });
export const MapMode = Object.freeze({ READ: 0x1 });

async function findGpu(gpu) {
  if (gpu) return gpu;
  if (globalThis.navigator?.gpu) return globalThis.navigator.gpu;
  if (isNode) {
    let mod;
    try {
      mod = await importPackage('webgpu');
    } catch {
      throw new WebtrainError("backend 'webgpu' in Node needs a GPU: pass init({ backend: 'webgpu', gpu }) with create([]) from the 'webgpu' package (npm install webgpu)");
    }
    return mod.create([]);
  }
  throw new WebtrainError("backend 'webgpu': this browser has no navigator.gpu (WebGPU needs a secure context, https or localhost)");
}

export class GpuDevice {
  #lost = null;
  #uncaptured = null;

  constructor(gpu, adapter, device) {
    // Dawn's Node bindings settle a device's promises through its instance and adapter: both
    // stay referenced for as long as the device is used.
    this.gpu = gpu;
    this.adapter = adapter;
    this.device = device;
    this.pipelines = new Map(); // program name -> Promise<GPUComputePipeline>
    device.lost.then((info) => {
      this.#lost = `the WebGPU device was lost (${info.reason ?? 'unknown'}${info.message ? `: ${info.message}` : ''})`;
    });
    device.addEventListener?.('uncapturederror', (e) => {
      this.#uncaptured ??= e.error?.message ?? String(e.error ?? e);
    });
  }

  static async open(gpuOption) {
    const gpu = await findGpu(gpuOption);
    const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
    if (!adapter) {
      const hint = isNode ? "; in Node the webgpu package's Dawn needs a Vulkan driver: a GPU's, or SwiftShader's on the CPU (VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json, from Debian's chromium)" : '';
      throw new WebtrainError(`backend 'webgpu': the GPU object gave no adapter (requestAdapter() returned null)${hint}`);
    }
    const L = adapter.limits;
    const device = await adapter.requestDevice({
      requiredLimits: { maxStorageBufferBindingSize: L.maxStorageBufferBindingSize, maxBufferSize: L.maxBufferSize },
    });
    return new GpuDevice(gpu, adapter, device);
  }

  /** What runtimeInfo() reports of the adapter. */
  info() {
    const i = this.adapter.info ?? {};
    const L = this.device.limits;
    return {
      vendor: i.vendor ?? '',
      architecture: i.architecture ?? '',
      description: i.description ?? '',
      limits: { maxBufferSize: L.maxBufferSize, maxStorageBufferBindingSize: L.maxStorageBufferBindingSize },
    };
  }

  /** Throws when the device was lost or an error escaped every scope since the last call. */
  check() {
    if (this.#lost) throw new WebtrainError(`${this.#lost}; checkpoints saved before it are intact (load one with backend 'wasm' to go on)`);
    if (this.#uncaptured) {
      const msg = this.#uncaptured;
      this.#uncaptured = null;
      throw new WebtrainError(`WebGPU error: ${msg}`);
    }
  }

  /** f() inside a validation and an out-of-memory error scope; their first error is thrown. */
  async scoped(what, f) {
    this.check();
    const d = this.device;
    d.pushErrorScope('out-of-memory');
    d.pushErrorScope('validation');
    let result, thrown;
    try {
      result = await f();
    } catch (err) {
      thrown = err;
    }
    const validation = await d.popErrorScope();
    const oom = await d.popErrorScope();
    if (thrown) throw thrown;
    const e = validation ?? oom;
    if (e) throw new WebtrainError(`${what}: WebGPU ${validation ? 'validation' : 'out-of-memory'} error: ${e.message}`);
    this.check();
    return result;
  }

  /** The pipeline of a WGSL program (built once per device); a program that does not compile is an error quoting the compiler. */
  pipeline(name, code) {
    let p = this.pipelines.get(name);
    if (!p) {
      p = (async () => {
        const module = this.device.createShaderModule({ code, label: name });
        const info = await module.getCompilationInfo();
        const errors = info.messages.filter((m) => m.type === 'error');
        if (errors.length) throw new WebtrainError(`WGSL program '${name}' does not compile: ${errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; ')}`);
        return this.device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' }, label: name });
      })();
      p.catch(() => this.pipelines.delete(name));
      this.pipelines.set(name, p);
    }
    return p;
  }
}
