// Type declarations for js/core.js.

/**
 * Options for loading the WebAssembly core. They apply to the first call that loads the core
 * only (the core is loaded once per process, page or worker); every API entry point that
 * accepts an `options` argument passes it on to {@link init}.
 */
export interface InitOptions {
  /** The bytes of `webtrain-core.wasm`, when you load them yourself. */
  wasmBinary?: Uint8Array | ArrayBuffer | undefined;
  /**
   * Where to fetch `webtrain-core.wasm` from (default: next to the package's JS files, which
   * Vite and webpack 5 emit by themselves; esbuild does not: there, `import wasmUrl from
   * 'webtrain/webtrain-core.wasm'` with `loader: { '.wasm': 'file' }` and pass it). Relative
   * URLs are resolved against the page; in Node, a file path or file: URL is read from disk. Where the .wasm cannot be loaded, the first API call
   * rejects with a WebtrainError naming this option.
   */
  wasmUrl?: string | URL | undefined;
  /**
   * How many threads the core uses (default `'auto'`: the cores the platform reports —
   * `os.availableParallelism()` in Node, `navigator.hardwareConcurrency` in browsers — capped at
   * 8; a number is capped at 8 too). More than 1 loads the threaded build where it can run:
   * Node, or a page or worker that is `crossOriginIsolated` (served with
   * `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp`).
   * Elsewhere the single-threaded build loads, never an error. `1` always loads the
   * single-threaded build. See {@link runtimeInfo} for what was loaded.
   */
  threads?: 'auto' | number | undefined;
  /**
   * Where the threaded build's `webtrain-core-mt.mjs` is served (its `.wasm` and
   * `webtrain-core-mt.worker.js` beside it): default `dist/mt/` next to the package's files.
   * Bundlers do not emit these files: copy `node_modules/webtrain/dist/mt/` to where your app is
   * served and pass its URL here. Without it, a bundled app (or one that gave `wasmUrl` or
   * `wasmBinary`) loads the single-threaded build, as does any page where the default
   * location's threaded build cannot load. Given, where threads can run, a threaded build that
   * cannot be loaded from there is a WebtrainError naming this option.
   */
  threadedUrl?: string | URL | undefined;
  /**
   * Which vector build to load (default `'auto'`): `'auto'` loads the relaxed-SIMD build
   * (`dist/webtrain-core-fma.wasm`, `dist/mt/webtrain-core-mt-fma.wasm`: fused multiply-add,
   * `f32x4.relaxed_madd`; faster matrix products) where the
   * engine validates a Relaxed SIMD probe (Chromium 114+, Node 22+; Node 20 only when run with
   * `--experimental-wasm-relaxed-simd`), else the SIMD128 build, and the SIMD128 build too where
   * the relaxed-SIMD files cannot be loaded. `'relaxed'` requires it (a WebtrainError where the
   * engine cannot run it or its files cannot be loaded); `'simd128'` never loads it. Results of
   * the two builds differ in the last bits. With `wasmUrl`, `wasmBinary` or `threadedUrl`, the
   * build at that location loads, whichever it is. {@link runtimeInfo}`().simd` says which runs.
   */
  simd?: 'auto' | 'relaxed' | 'simd128' | undefined;
  /**
   * Where models compute (default `'wasm'`). `'webgpu'`: on the GPU through WebGPU (so far
   * `InferenceSession` only, for models whose ops all have a webgpu kernel: docs/ops.md; a
   * WebtrainError naming the others); `'auto'`: WebGPU where an adapter exists and the model's ops
   * all have kernels, else wasm with a warning saying why. Unlike the options above, a later
   * `init({ backend })` changes it for the calls after it; a call's own `backend` option
   * (`InferenceSession.create(model, { backend })`) applies to that call.
   */
  backend?: 'wasm' | 'webgpu' | 'auto' | undefined;
  /**
   * The WebGPU entry point for `backend: 'webgpu' | 'auto'`: `navigator.gpu` (the default in a
   * browser), or in Node `create([])` of the `webgpu` package (Dawn; imported by default when
   * installed). Typed loosely so that no WebGPU type declarations are needed.
   */
  gpu?: { requestAdapter(options?: object): Promise<unknown> } | undefined;
}

/** What the loaded core runs with, as {@link runtimeInfo} returns it. */
export interface RuntimeInfo {
  /** Threads the core's kernels use (1 in the single-threaded build). */
  threads: number;
  /**
   * The vector instruction set of the loaded build: `'wasm-relaxed-simd'` (the `*-fma.wasm`: fused
   * multiply-add) or `'wasm-simd128'`.
   */
  simd: string;
  /** Whether this page or worker is cross-origin isolated (always false in Node). */
  crossOriginIsolated: boolean;
  /** Which build was loaded: `'threaded'` (dist/mt/) or `'single'`. */
  build: 'single' | 'threaded';
  /** Where calls compute by default (see {@link InitOptions.backend}). */
  backend: 'wasm' | 'webgpu';
  /** The WebGPU adapter once a GPU device is open, else null. */
  adapter: { vendor: string; architecture: string; description: string; limits: { maxBufferSize: number; maxStorageBufferBindingSize: number } } | null;
}

/** The loaded WebAssembly core, as `init()` resolves it. */
export declare class Core {
  private constructor();
  /** The raw Emscripten module (its exported `_wtw_*` functions and heap views). Unstable. */
  readonly m: any;
  /** The current WebAssembly heap (re-read it after any call: memory may grow). */
  readonly heap: Uint8Array;
  /** The vector instruction set the core was built with, e.g. `'wasm-simd128'`. */
  simdName(): string;
  /** The message of the core's last error. */
  lastError(): string;
  /**
   * Heap figures in bytes: the wasm Memory size (the peak: it only grows), where malloc's heap
   * starts and ends, bytes malloc'd now, and malloc's footprint now and at its peak.
   */
  heapStats(): { memory: number; heapBase: number; heapTop: number; mallocInUse: number; mallocFootprint: number; mallocPeak: number };
}

/**
 * Loads the WebAssembly core (optional: every API entry point calls it). Resolves to the same
 * core on every call.
 */
export declare function init(options?: InitOptions): Promise<Core>;

/** What the loaded core runs with, or null before it is loaded (await {@link init} first). */
export declare function runtimeInfo(): RuntimeInfo | null;

/** The error webtrain throws; its message names what was wrong and what was expected. */
export declare class WebtrainError extends Error {
  constructor(message: string);
}
