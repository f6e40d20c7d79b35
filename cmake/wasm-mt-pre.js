// --pre-js of the threaded build (dist/mt/webtrain-core-mt.mjs), inside createWebtrainCore().
// Node 20 ESM has no require/__dirname, which Emscripten 3.1.6's Node branch uses: js/core.js
// passes Module.wtRequire (module.createRequire of this file) and Module.wtUrl (its file: URL).
// In a pthread worker (dist/mt/webtrain-core-mt.worker.js, CommonJS) the worker script has put
// require on the global. `Worker` is bound here so that the loader's `new Worker(...)` uses
// worker_threads in Node without relying on its own `global.Worker = ...` (js/core.js puts the
// user's global back).
var wtNode = typeof process == 'object' && typeof process.versions == 'object' && typeof process.versions.node == 'string';
var require = typeof globalThis.require == 'function' ? globalThis.require : Module['wtRequire'];
var __filename = wtNode && Module['wtUrl'] ? require('url').fileURLToPath(Module['wtUrl']) : '';
var __dirname = wtNode ? require('path').dirname(__filename) : '';
var Worker = wtNode ? require('worker_threads').Worker : globalThis.Worker;
