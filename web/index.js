// webtrain's browser entry: the whole package API (js/index.js) plus
//   - idb:// locations (IndexedDB) for checkpoints, artifacts and models, and `idb` (list,
//     delete, ...) — web/idb.js;
//   - `worker()`: the training API in a Web Worker, asynchronous — web/worker-host.js;
//   - `init({ wasmUrl, wasmBinary, threads, threadedUrl, simd })`: loads the core, checking
//     WebAssembly SIMD first; the threaded build (dist/mt/) where the page is crossOriginIsolated,
//     else the single-threaded one, each as its relaxed-SIMD (FMA) .wasm where the browser runs
//     it; `runtimeInfo()` says which.
// Works from a plain <script type="module"> (import '/web/index.js' served statically) and from
// bundlers: the .wasm is found next to dist/webtrain-core.mjs and the worker next to
// web/worker-host.js through new URL(..., import.meta.url), which Vite and webpack 5 follow;
// with esbuild, init({ wasmUrl }) / worker({ wasmUrl, workerUrl }) say where they are (the
// first call that needs one names it in its error).
import * as idb from './idb.js';

export * from '../js/index.js';
export { idb };
export { worker, transfer } from './worker-host.js';

export { init, simdSupported, relaxedSimdSupported, checkSupport } from './init.js';
