// The README's flow on a frozen base under a trained head, shared by weights-once.test.mjs and
// weights-inside.test.mjs (not a test file itself): generateArtifacts without artifactDirectory,
// loadCheckpoint, Module.create and Optimizer.create on the returned bytes, 3 train steps and an
// eval step; then the heap's figures, and whatever `after(module)` adds (an export) before the
// objects are released.
import { artifacts, CheckpointState, Module, Optimizer, init } from '../../js/index.js';

export async function baseFlow(model, { options, moduleOptions = {}, x, y, after }) {
  const core = await init();
  const art = await artifacts.generateArtifacts(model, options);
  const generated = core.heapStats().memory;
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel, moduleOptions);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  const losses = [];
  for (let i = 0; i < 3; i++) {
    losses.push(module.train().runAll(x(), y())[0].data[0]);
    optimizer.step();
    module.lazyResetGrad();
  }
  const evalLoss = module.eval().runAll(x(), y())[0].data[0];
  const { memory, mallocInUse } = core.heapStats();
  const packed = module.memoryStats().packed;
  const more = after ? await after(module, core) : {};
  optimizer.release();
  module.release();
  state.release();
  const sizes = Object.fromEntries(Object.entries(art).map(([k, v]) => [k, v?.byteLength ?? 0]));
  return { art, sizes, generated, memory, mallocInUse, packed, losses, evalLoss, ...more };
}
