// webtrain's browser entry: the whole package API (js/index.js) plus
//   - idb:// locations (IndexedDB) for checkpoints, artifacts and models, and `idb` (list,
//     delete, ...) — web/idb.js;
//   - `worker()`: the training API in a Web Worker, asynchronous — web/worker-host.js;
//   - `init({ wasmUrl, wasmBinary })`: loads the core, checking WebAssembly SIMD first.
// Works from a plain <script type="module"> (import '/web/index.js' served statically) and from
// bundlers: the .wasm is found next to dist/webtrain-core.mjs through import.meta.url.
import * as idb from './idb.js';

export * from '../js/index.js';
export { idb };
export { worker, transfer } from './worker-host.js';

export { init, simdSupported, checkSupport } from './init.js';
