// What webtrain.worker() proxies: for each class of the synchronous API whose objects live in
// the worker, the members its host-side proxy (web/worker-host.js) has, every one a method that
// returns a Promise (getters of the synchronous API, such as module.isTraining, become methods:
// `await module.isTraining()`), and the members it does not proxy, with the reason.
// tests/js/proxies.test.mjs fails when a public member of a real class is in neither list.

/** Class -> members proxied as `name(...args) -> Promise`; `nested` members are objects of another entry. */
export const PROXIED = {
  CheckpointState: { methods: ['toBytes', 'loadParameters', 'isLive', 'release'], nested: { parameters: 'Parameters', properties: 'Properties' } },
  Parameters: { methods: ['get', 'set', 'has', 'keys', 'values', 'entries', 'size'] },
  Properties: { methods: ['get', 'set', 'has', 'entries', 'size'] },
  Module: {
    methods: [
      'train', 'eval', 'isTraining', 'backend', 'inputNames', 'outputNames', 'run', 'runNamed', 'runAll', 'predict', 'lazyResetGrad', 'memoryStats', 'isLive',
      'getParametersSize', 'getContiguousParameters', 'copyBufferToParameters', 'exportModelForInferencing', 'exportMergedModel', 'exportLoraAdapter', 'release',
    ],
  },
  Optimizer: { methods: ['step', 'setLearningRate', 'getLearningRate', 'isLive', 'release'] },
  LinearLRScheduler: { methods: ['step', 'release'] },
  InferenceSession: { methods: ['run', 'arenaBytes', 'backend', 'release'] },
};

/** Class -> member -> why the proxy does not have it. */
export const NOT_PROXIED = {
  '*': {
    core: 'internal: the wasm core of the handle, which stays in the worker',
    m: 'internal: the exported functions of the core, which stay in the worker',
    h: 'internal: the C handle, meaningless outside the worker',
    drop: 'internal: handle bookkeeping of release()',
  },
  Module: { state: 'the host already holds the RemoteCheckpointState it passed to Module.create' },
  InferenceSession: { runSync: 'synchronous by nature; run() is its asynchronous form' },
};

/** The functions of web/idb.js the worker host forwards (worker.idb.list(), ...). */
export const IDB_FUNCTIONS = ['list', 'load', 'save', 'has', 'delete', 'clear'];

/** The static functions (and constructors, as `create`) each class has on the worker host: class -> names. */
export const STATICS = {
  CheckpointState: ['loadCheckpoint', 'saveCheckpoint'],
  Module: ['create'],
  Optimizer: ['create'],
  LinearLRScheduler: ['create'],
  InferenceSession: ['create'],
};
