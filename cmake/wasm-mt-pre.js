// --pre-js of the threaded build (dist/mt/webtrain-core-mt.mjs), inside createWebtrainCore().
// Node 20 ESM has no require/__dirname, which Emscripten 3.1.6's Node branch uses: js/core.js
// passes Module.wtRequire (module.createRequire of this file) and Module.wtUrl (its file: URL).
// In a pthread worker (dist/mt/webtrain-core-mt.worker.js, CommonJS) the worker script has put
// require on the global. `Worker` is bound here so that the loader's `new Worker(...)` uses
// worker_threads in Node without relying on its own `global.Worker = ...` (js/core.js puts the
// user's global back), and so that a thread worker that fails to start (its script missing, a
// policy refusing it) calls Module.wtOnWorkerError: the loader would wait for it forever.
var wtNode = typeof process == 'object' && typeof process.versions == 'object' && typeof process.versions.node == 'string';
var require = typeof globalThis.require == 'function' ? globalThis.require : Module['wtRequire'];
var __filename = wtNode && Module['wtUrl'] ? require('url').fileURLToPath(Module['wtUrl']) : '';
var __dirname = wtNode ? require('path').dirname(__filename) : '';
var wtWorkerClass = wtNode ? require('worker_threads').Worker : globalThis.Worker;
var Worker = function (url, options) {
  var w = new wtWorkerClass(url, options);
  // The loader sets w.onerror to a handler that rethrows (in Node: an uncaught exception, the
  // end of the user's process). While js/core.js waits for the pool, errors go to
  // Module.wtOnWorkerError (init() then rejects or falls back); after, to the loader's handler.
  var loaderOnError = null;
  var dispatch = function (e) {
    var h = Module['wtOnWorkerError'];
    if (h) h(e);
    else if (loaderOnError) loaderOnError.call(w, e);
  };
  Object.defineProperty(w, 'onerror', {
    configurable: true,
    get: function () { return wtNode ? dispatch : null; }, // Node: the loader's w.on('error', e => w.onerror(e))
    set: function (f) { loaderOnError = f; },
  });
  if (!wtNode) w.addEventListener('error', dispatch);
  return w;
};
