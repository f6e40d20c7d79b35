// Loads the WebAssembly core once per process (or page/worker) and wraps its flat C ABI
// (src/wasm/api.c). The .wasm is compiled here and handed to the generated loader, which only
// instantiates it: Node reads the bytes from disk (the loader never touches Node-specific
// paths, which break under Node 20 ESM); browsers fetch it next to the module
// (import.meta.url) unless `wasmUrl`/`wasmBinary` is given, and a .wasm that is not there is a
// WebtrainError naming init({ wasmUrl }), not an Emscripten abort.

import { importNode, isNode } from './node-builtin.js';
import { Status, HeapStat, readRecord } from './abi.js';
import { checkOptions, INIT_OPTIONS } from './options.js';


let corePromise = null;
let runtime = null; // runtimeInfo()'s answer once the core is loaded

/** The most threads init() uses (and the pthread pool it starts): 'auto' is the cores reported, capped here. */
export const MAX_THREADS = 8;

/**
 * Initializes the core. Optional: every API entry point calls it. Options apply to the first
 * call only: { wasmBinary?: Uint8Array|ArrayBuffer, wasmUrl?: string|URL, threads?: 'auto'|number,
 * threadedUrl?: string|URL, simd?: 'auto'|'relaxed'|'simd128' }; except backend?: 'wasm' |
 * 'webgpu' | 'auto' (and gpu?: a GPU object, navigator.gpu or the `webgpu` package's
 * create([])), which sets the default backend of later calls whenever init() names one.
 */
export async function init(options = {}) {
  checkOptions(options, INIT_OPTIONS, 'init');
  const core = await coreFor(options ?? {});
  if (options?.backend !== undefined) {
    // the default backend of every later call: set by init() only, whenever it names one
    const gpu = await gpuFor(options, 'init');
    defaultBackend = gpu ? options.backend : 'wasm';
    defaultGpu = options.gpu;
    runtime.backend = gpu ? 'webgpu' : 'wasm';
  }
  return core;
}

/**
 * init() for the calls that load the core on the way (Module.create, generateArtifacts, ...):
 * they check their options, init's among them, themselves.
 */
export function coreFor(options) {
  if (!corePromise) corePromise = load(options).catch((err) => {
    corePromise = null;
    throw err;
  });
  return corePromise;
}

/**
 * What the loaded core runs with: { threads, simd: 'wasm-relaxed-simd' | 'wasm-simd128',
 * crossOriginIsolated, build: 'single' | 'threaded', backend: 'wasm' | 'webgpu', adapter }
 * (adapter: the WebGPU adapter's vendor, architecture, description and limits once a GPU
 * device is open, else null), or null before the core is loaded (init() resolves it).
 */
export function runtimeInfo() {
  return runtime ? { ...runtime } : null;
}

const BACKENDS = ['wasm', 'webgpu', 'auto'];
let defaultBackend = 'wasm';
let defaultGpu;
const devices = new Map(); // GPU object (null: the one found by default) -> Promise<GpuDevice>
const warned = new Set();

/** The backend a call asked for: its `backend` option, else init's. */
export function chosenBackend(options) {
  return options?.backend ?? defaultBackend;
}

/** console.warn, once per message. */
export function warnOnce(message) {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(message);
}

/**
 * The GPU device (js/gpu/device.js) a call runs on, from its `backend` option or init's: null for
 * 'wasm'; for 'webgpu' the device, opened once per GPU object (a WebtrainError where there is
 * none); for
 * 'auto' the device where one opens, else null with a warning saying why.
 */
export async function gpuFor(options, context) {
  const want = options?.backend ?? defaultBackend;
  if (!BACKENDS.includes(want)) {
    throw new WebtrainError(`${context}({ backend }): expected 'wasm', 'webgpu' or 'auto', got ${typeof want === 'string' ? `'${want}'` : String(want)}`);
  }
  if (want === 'wasm') return null;
  try {
    const key = options?.gpu ?? defaultGpu ?? null;
    if (!devices.has(key)) {
      const { GpuDevice } = await import('./gpu/device.js');
      devices.set(key, GpuDevice.open(key ?? undefined).catch((err) => {
        devices.delete(key);
        throw err;
      }));
    }
    const gpu = await devices.get(key);
    if (runtime) runtime.adapter = gpu.info();
    return gpu;
  } catch (err) {
    if (want === 'webgpu') throw err;
    warnOnce(`webtrain: backend 'auto' runs on wasm: ${err.message}`);
    return null;
  }
}

/** Whether this realm can run the threaded build: Node, or a page/worker that is crossOriginIsolated (SharedArrayBuffer). */
export function threadsAvailable() {
  if (isNode) return typeof SharedArrayBuffer === 'function';
  return globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function' && typeof Worker === 'function';
}

async function coresReported() {
  if (isNode) {
    const os = await importNode('os');
    return os.availableParallelism?.() ?? os.cpus().length;
  }
  return globalThis.navigator?.hardwareConcurrency ?? 1;
}

/** init's `threads` option -> the number of threads wanted (1..MAX_THREADS). */
async function wantedThreads(threads = 'auto') {
  if (threads === 'auto') return Math.max(1, Math.min(MAX_THREADS, Math.floor(await coresReported()) || 1));
  if (!Number.isInteger(threads) || threads < 1) {
    throw new WebtrainError(`init({ threads }): expected 'auto' or a whole number >= 1, got ${typeof threads === 'string' ? `'${threads}'` : String(threads)}`);
  }
  return Math.min(threads, MAX_THREADS);
}

// (module (func (result v128) (v128.const i32x4 0 0 0 0)))
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 22, 1, 20, 0, 253, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11,
]);

/** Whether this engine runs WebAssembly SIMD (128-bit), which the core is built with. */
export function simdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

// (module (func (param v128 v128 v128) (result v128) (f32x4.relaxed_madd (local.get 0) (local.get 1) (local.get 2))))
const RELAXED_SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2, 253, 133, 2, 11,
]);

/**
 * Whether this engine runs WebAssembly Relaxed SIMD (its fused multiply-add), which the
 * fused-multiply-add builds (webtrain-core-fma.wasm, webtrain-core-mt-fma.wasm) use: Chromium
 * 114+, Node 22+, Node 20 only with --experimental-wasm-relaxed-simd.
 */
export function relaxedSimdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(RELAXED_SIMD_PROBE);
  } catch {
    return false;
  }
}

/**
 * init's `simd` option -> whether to load the relaxed-SIMD (fused multiply-add) build from its
 * default location: 'auto' (the default) where the engine runs it, 'relaxed' always (an error
 * where it cannot run), 'simd128' never.
 */
function wantRelaxed(simd = 'auto') {
  if (simd === 'simd128') return false;
  if (simd === 'auto') return relaxedSimdSupported();
  if (simd !== 'relaxed') {
    throw new WebtrainError(`init({ simd }): expected 'auto', 'relaxed' or 'simd128', got ${typeof simd === 'string' ? `'${simd}'` : String(simd)}`);
  }
  if (!relaxedSimdSupported()) {
    throw new WebtrainError(
      "init({ simd: 'relaxed' }): this engine does not run WebAssembly Relaxed SIMD (Chromium 114+, Node 22+; Node 20 needs --experimental-wasm-relaxed-simd): use simd: 'auto' to fall back to the SIMD128 build",
    );
  }
  return true;
}

/** Throws a WebtrainError explaining what is missing when the core cannot run here. */
export function checkSupport() {
  if (typeof WebAssembly !== 'object') throw new WebtrainError('this browser has no WebAssembly: webtrain needs WebAssembly with SIMD (Chrome/Edge 91+, Firefox 89+, Safari 16.4+)');
  if (!simdSupported()) {
    throw new WebtrainError(
      'this browser does not support WebAssembly SIMD (128-bit), which webtrain\'s core is built with: use Chrome/Edge 91+, Firefox 89+ or Safari 16.4+ (or enable WebAssembly SIMD)',
    );
  }
}

async function load(options) {
  if (!isNode) checkSupport(); // a clear error, not a compile failure, where SIMD is missing
  const threads = await wantedThreads(options.threads);
  // The relaxed-SIMD (FMA) builds, .wasm files beside the SIMD128 ones that the same .mjs loads,
  // load from the default locations only: where the engine validates relaxed SIMD (or simd:
  // 'relaxed' asks for them) and no location was given (wasmUrl, wasmBinary, threadedUrl).
  // Under 'auto', an FMA build that cannot load gives way to the SIMD128 one.
  const forced = options.simd === 'relaxed';
  const relaxed = wantRelaxed(options.simd) && !options.wasmUrl && !options.wasmBinary && options.threadedUrl == null;
  const fmaOr = async (loadFma) => {
    if (!relaxed) return null;
    try {
      return await loadFma();
    } catch (err) {
      if (forced) throw err;
      return null;
    }
  };
  // The threaded build where it can run and more than one thread is wanted; its location is
  // known by default (next to this package's files) unless the single build's was given
  // (wasmUrl/wasmBinary: a bundle or a custom host), where threadedUrl says where it is.
  const explicit = options.threadedUrl != null;
  if (threads > 1 && threadsAvailable() && (explicit || (!options.wasmUrl && !options.wasmBinary))) {
    const fma = await fmaOr(() => loadThreaded(options, threads, true));
    if (fma) return fma;
    try {
      return await loadThreaded(options, threads);
    } catch (err) {
      // Not there (a bundle that did not copy dist/mt/), or it cannot run here (a thread worker
      // that does not start, a shared Memory the engine refuses): the single-threaded build,
      // unless the threaded build's location was given explicitly.
      if (explicit) {
        if (err?.code === WASM_ERROR) err.message = err.message.replace(`${WASM_OPTION} tells webtrain where the .wasm is served`, `${THREADED_OPTION} tells webtrain where webtrain-core-mt.mjs is served, its .wasm and worker script beside it`);
        throw err;
      }
    }
  }
  return (await fmaOr(() => loadSingle(options, true))) ?? loadSingle(options);
}

/**
 * dist/webtrain-core-fma.wasm beside the SIMD128 .wasm's default location, or null where that is
 * not this package's dist/ (a bundle emitted the .wasm elsewhere, under another name: the
 * bundled app loads the SIMD128 build unless it passes the FMA .wasm as wasmUrl).
 */
function defaultFmaWasmUrl() {
  const url = defaultWasmUrl();
  return url && /\/dist\/webtrain-core\.wasm$/.test(new URL(url).pathname) ? new URL('webtrain-core-fma.wasm', url).href : null;
}

/** The single-threaded build: the SIMD128 .wasm (dist/, or options'), or with `fma` the relaxed-SIMD one beside it. */
async function loadSingle(options, fma = false) {
  const fmaUrl = fma ? defaultFmaWasmUrl() : null;
  if (fma && !fmaUrl) throw wasmError('its default location', 'this is not the package layout (a bundle)', true);
  const { default: createWebtrainCore } = await import('../dist/webtrain-core.mjs');
  // The .wasm is fetched and compiled here, not by the Emscripten loader, so that a .wasm that
  // is not where it was expected is a WebtrainError naming the option to set, not an abort.
  const wasm = await compileCore(fma ? { wasmUrl: fmaUrl } : options);
  const m = await instantiate(createWebtrainCore, wasm, {
    locateFile: (path) => path, // (unused: set so the loader does not evaluate import.meta.url, empty in some bundles)
  });
  m._wt_set_threads(1); // sizes the pool of one: its buffers are made now, not in the first step
  return finish(m, 'single', 1);
}

/** `relative` resolved against `base` (a module's import.meta.url), or null where that is empty. */
export function urlOrNull(relative, base) {
  try {
    return new URL(relative, base).href;
  } catch {
    return null;
  }
}

/**
 * dist/mt/webtrain-core-mt.mjs next to this package's files, or null where import.meta.url is
 * empty. Not new URL('...', import.meta.url): bundlers would follow it and bundle the threaded
 * build's Node branch; a bundled app that wants threads copies dist/mt/ and passes threadedUrl.
 */
function defaultThreadedUrl() {
  const moduleUrl = import.meta.url;
  return urlOrNull('../dist/mt/webtrain-core-mt.mjs', moduleUrl);
}

/**
 * The threaded build (dist/mt/): its .wasm (with `fma`, the relaxed-SIMD webtrain-core-mt-fma.wasm)
 * and worker script are next to its .mjs.
 */
async function loadThreaded(options, threads, fma = false) {
  const url = options.threadedUrl != null ? String(options.threadedUrl) : defaultThreadedUrl();
  if (!url) throw wasmError('its default location', 'import.meta.url is empty here', true);
  const mjsUrl = isNode && !/^[a-z][a-z0-9+.-]*:/i.test(url) ? (await importNode('url')).pathToFileURL(url).href : url;
  const wasmUrl = new URL(fma ? 'webtrain-core-mt-fma.wasm' : 'webtrain-core-mt.wasm', mjsUrl).href;
  const wasm = await compileCore({ wasmUrl });
  let createWebtrainCore;
  try {
    ({ default: createWebtrainCore } = await import(/* @vite-ignore */ /* webpackIgnore: true */ mjsUrl));
  } catch (err) {
    throw wasmError(mjsUrl, `importing it fails: ${err.message}`, options.threadedUrl == null);
  }
  const toPath = isNode ? (await importNode('url')).fileURLToPath : null;
  const nodeRequire = isNode ? (await importNode('module')).createRequire(mjsUrl) : undefined;
  const hadWorker = Object.hasOwn(globalThis, 'Worker');
  const userWorker = globalThis.Worker;
  const moduleArgs = {
    wtUrl: mjsUrl, // (Node: the pre-js, cmake/wasm-mt-pre.js, derives __dirname from it ...
    wtRequire: nodeRequire, // ... and gives the loader this require: Node 20's ESM has neither)
    wtPool: threads, // pthread workers started (and loaded) before the module resolves
    mainScriptUrlOrBlob: mjsUrl, // what each pthread worker imports
    locateFile: (path) => {
      const u = new URL(path, mjsUrl);
      return toPath && u.protocol === 'file:' ? toPath(u) : u.href;
    },
  };
  const workerUrl = new URL('webtrain-core-mt.worker.js', mjsUrl).href;
  const workerError = (e) => wasmError(workerUrl, `its thread worker did not start: ${e?.message || 'the script failed to load'}`, options.threadedUrl == null);
  let m;
  try {
    m = await instantiate(createWebtrainCore, wasm, moduleArgs, workerError);
  } catch (err) {
    for (const w of moduleArgs.PThread?.unusedWorkers ?? []) w.terminate();
    throw err;
  } finally {
    // Emscripten 3.1.6's Node branch sets global.Worker to worker_threads' Worker: put back what the user had.
    if (isNode) {
      if (hadWorker) globalThis.Worker = userWorker;
      else delete globalThis.Worker;
    }
  }
  m.wtOnWorkerError = null; // loaded: a thread worker's error from now on is the loader's (cmake/wasm-mt-pre.js)
  // Node: the pool's workers must not keep the process alive once the user's code is done.
  if (isNode) for (const w of m.PThread?.unusedWorkers ?? []) w.unref?.();
  if (typeof m._wt_set_threads === 'function') m._wt_set_threads(threads);
  return finish(m, 'threaded', typeof m._wt_get_threads === 'function' ? m._wt_get_threads() : 1);
}

/**
 * Runs an Emscripten factory with our compiled module; an instantiation failure rejects with a
 * WebtrainError. `moduleArgs` becomes the module object (MODULARIZE), so the caller can reach
 * what the loader put on it (PThread) even when it fails; moduleArgs.wtOnWorkerError, set here,
 * rejects with `workerError(event)` when a pthread worker fails (cmake/wasm-mt-pre.js), where the
 * loader would otherwise wait for it forever.
 */
async function instantiate(factory, wasm, moduleArgs, workerError = null) {
  let failed;
  const instantiateFailed = new Promise((_, reject) => {
    failed = reject;
  });
  if (workerError) moduleArgs.wtOnWorkerError = (event) => failed(workerError(event));
  moduleArgs.instantiateWasm = (imports, receive) => {
    WebAssembly.instantiate(wasm, imports).then(
      (instance) => receive(instance, wasm),
      (err) => failed(new WebtrainError(`cannot instantiate webtrain's WebAssembly core: ${err.message}`)),
    );
    return {};
  };
  return Promise.race([factory(moduleArgs), instantiateFailed]);
}

function finish(m, build, threads) {
  const core = new Core(m);
  runtime = {
    threads,
    simd: core.simdName(),
    crossOriginIsolated: isNode ? false : globalThis.crossOriginIsolated === true,
    build,
    backend: 'wasm',
    adapter: null,
  };
  return core;
}

/** The option that tells webtrain where the .wasm is; worker() replaces it in its errors. */
export const WASM_OPTION = 'init({ wasmUrl })';
/** The option that tells webtrain where the threaded build is; worker() replaces it too. */
export const THREADED_OPTION = 'init({ threadedUrl })';
/** The `code` of the errors of a .wasm that cannot be loaded. */
export const WASM_ERROR = 'ERR_WEBTRAIN_WASM';

function wasmError(where, why, isDefault) {
  const bundlers = isDefault && !isNode
    ? `; a bundler that does not emit it by itself (esbuild) needs it: import wasmUrl from 'webtrain/webtrain-core.wasm' with esbuild's loader { '.wasm': 'file' }, then ${WASM_OPTION}`
    : '';
  const e = new WebtrainError(`cannot load webtrain's WebAssembly core from ${where}: ${why} (${WASM_OPTION} tells webtrain where the .wasm is served${bundlers})`);
  e.code = WASM_ERROR;
  return e;
}

async function compileOr(where, isDefault, bytesOrResponse) {
  try {
    return await (bytesOrResponse instanceof Response ? WebAssembly.compileStreaming(bytesOrResponse) : WebAssembly.compile(bytesOrResponse));
  } catch (err) {
    throw wasmError(where, `not a valid WebAssembly module: ${err.message}`, isDefault);
  }
}

/** dist/webtrain-core.wasm next to this package's files (bundlers that follow this expression emit it), or null where import.meta.url is empty. */
function defaultWasmUrl() {
  try {
    return new URL('../dist/webtrain-core.wasm', import.meta.url).href;
  } catch {
    return null;
  }
}

/**
 * The core's WebAssembly.Module: from options.wasmBinary; in Node read from the file next to
 * this package (or options.wasmUrl, a file: URL or a path); otherwise fetched from
 * options.wasmUrl or, by default, next to dist/webtrain-core.mjs.
 */
async function compileCore(options) {
  if (options.wasmBinary) return compileOr('the given wasmBinary', false, options.wasmBinary);
  const isDefault = !options.wasmUrl;
  const url = isDefault ? defaultWasmUrl() : String(options.wasmUrl);
  if (!url) throw wasmError('its default location', "import.meta.url is empty here (a bundle format without it, such as esbuild's iife: format 'esm' keeps it)", true);
  if (isNode && !/^(https?|data|blob):/i.test(url)) {
    const { readFile } = await importNode('fs/promises');
    let bytes;
    try {
      bytes = await readFile(url.startsWith('file:') ? new URL(url) : url);
    } catch (err) {
      throw wasmError(url, err.message, isDefault);
    }
    return compileOr(url, isDefault, bytes);
  }
  let res;
  try {
    res = await fetch(url);
  } catch (err) {
    throw wasmError(url, `fetching it fails: ${err.message}`, isDefault);
  }
  if (!res.ok) throw wasmError(url, `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, isDefault);
  const type = res.headers.get('content-type') ?? '';
  if (/^application\/wasm\b/i.test(type)) return compileOr(url, isDefault, res);
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (!(bytes[0] === 0 && bytes[1] === 0x61 && bytes[2] === 0x73 && bytes[3] === 0x6d)) {
    throw wasmError(url, `what is served there is not WebAssembly (content-type '${type}'${/html/i.test(type) ? ': a page, such as a server\'s answer to an unknown path' : ''})`, isDefault);
  }
  return compileOr(url, isDefault, bytes);
}

export class WebtrainError extends Error {
  constructor(message) {
    super(message);
    this.name = 'WebtrainError';
  }
}

/** Thin typed access to the exported functions and the heap. */
export class Core {
  constructor(m) {
    this.m = m;
  }

  /** Current heap bytes (re-read after every call that can allocate: memory may grow). */
  get heap() {
    const h = this.m.HEAPU8;
    // The threaded build's memory is a SharedArrayBuffer: growing it does not detach the old
    // view, which then is merely short. Re-read the view from the Memory when it grew.
    const mem = this.m.wasmMemory;
    if (mem && h.buffer !== mem.buffer) return (this.m.HEAPU8 = new Uint8Array(mem.buffer));
    return h;
  }

  string(ptr) {
    return ptr ? this.m.UTF8ToString(ptr >>> 0) : '';
  }

  lastError() {
    return this.string(this.m._wtw_last_error());
  }

  /** Throws the last error if status is non-zero. */
  check(status, context) {
    if (status !== Status.OK) throw new WebtrainError(context ? `${context}: ${this.lastError()}` : this.lastError());
  }

  /** Throws the last error if handle is 0. */
  handle(h, context) {
    if (!h) throw new WebtrainError(context ? `${context}: ${this.lastError()}` : this.lastError());
    return h;
  }

  // Pointers cross the ABI as i32: those past 2 GB arrive negative. Wherever JS indexes the
  // heap with one, it is read unsigned (>>> 0); handed back to the core, the bits are the same.
  malloc(n) {
    const p = this.m._wtw_malloc(Math.max(1, n));
    if (!p) throw new WebtrainError(`out of WebAssembly memory allocating ${n} bytes`);
    return p >>> 0;
  }

  free(p) {
    if (p) this.m._wtw_free(p);
  }

  /** Copies bytes (a typed array or ArrayBuffer) into a fresh heap buffer; returns its pointer (caller frees). */
  copyIn(bytes) {
    const u8 = toU8(bytes);
    const p = this.malloc(u8.byteLength);
    this.heap.set(u8, p);
    return p;
  }

  /** A NUL-terminated UTF-8 copy of `s` in the heap; returns its pointer (caller frees). */
  cstring(s) {
    return this.copyIn(encoder.encode(`${s}\0`));
  }

  /** fn(...pointers) with heap C-string copies of `strings`, freed when fn returns or throws. */
  withStrings(strings, fn) {
    const ptrs = [];
    try {
      for (const s of strings) ptrs.push(this.cstring(s));
      return fn(...ptrs);
    } finally {
      ptrs.forEach((p) => this.free(p));
    }
  }

  /**
   * fn(pointer, byteLength) with a heap copy of `bytes` (a typed array or ArrayBuffer; null or
   * undefined: pointer 0), freed when fn returns or throws.
   */
  withBytes(bytes, fn) {
    if (bytes === null || bytes === undefined) return fn(0, 0);
    const p = this.copyIn(bytes);
    try {
      return fn(p, toU8(bytes).byteLength);
    } finally {
      this.free(p);
    }
  }

  /** A copy of `n` heap bytes at `ptr`. */
  copyOut(ptr, n) {
    ptr >>>= 0;
    return this.heap.slice(ptr, ptr + n);
  }

  /** Copies a buffer the core returned (a wtw_buf handle: data, size) out and frees it; throws the last error for a 0 handle. */
  takeBuf(b, context) {
    this.handle(b, context);
    try {
      return this.copyOut(this.m._wtw_buf_data(b), this.m._wtw_buf_size(b));
    } finally {
      this.m._wtw_buf_free(b);
    }
  }

  /** Writes numbers as float64 into a fresh heap buffer (dims cross the ABI as doubles). */
  copyInF64(values) {
    const p = this.malloc(Math.max(8, values.length * 8));
    const f64 = new Float64Array(this.heap.buffer, p, values.length);
    for (let i = 0; i < values.length; i++) f64[i] = Number(values[i]);
    return p;
  }

  /** fn(pointer) fills a record of doubles laid out by `slots` (abi.js HeapStat, ModuleMem): returned with named fields. */
  record(slots, fn) {
    const p = this.malloc(slots.COUNT * 8);
    try {
      fn(p);
      return readRecord(slots, new Float64Array(this.heap.buffer, p, slots.COUNT));
    } finally {
      this.free(p);
    }
  }

  simdName() {
    return this.string(this.m._wtw_simd_name());
  }

  /**
   * Heap figures (bytes): memory = the wasm Memory's size (it only grows: the peak), heapBase =
   * where malloc's heap starts (static data and the stack lie below), heapTop = the top of the
   * heap (sbrk(0)), mallocInUse = bytes malloc'd now, mallocFootprint / mallocPeak = bytes malloc
   * took from the heap now / at most (in-use plus free chunks it keeps).
   */
  heapStats() {
    return this.record(HeapStat, (p) => this.m._wtw_heap_stats(p));
  }
}

const encoder = new TextEncoder();
const toU8 = (bytes) => (bytes instanceof Uint8Array ? bytes : bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));

export const fns = (core) => core.m;
