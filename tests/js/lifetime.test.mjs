// Objects dropped without release() are freed once garbage-collected (FinalizationRegistry):
// 100 create / train / drop cycles (checkpoint state, module, optimizer, inference session)
// without release() keep the wasm heap's bytes in use and the process's RSS flat from cycle 20
// on, with garbage collection forced (a child node with --expose-gc). And nothing is freed while
// a live object still needs it: an optimizer alone keeps its module and their state usable
// through collections; release() still frees at once, and a release() after the collector ran
// or a second one does nothing. webtrain.worker()'s proxies: one collected without release()
// has the worker drop its object; one still held does not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const index = new URL('../../js/index.js', import.meta.url).href;
const workerHost = new URL('../../web/worker-host.js', import.meta.url).href;
const model = fileURLToPath(new URL('../golden/cases/mlp_ce_adamw/model.onnx', import.meta.url));

/** Runs `body` (an async function body with the API in scope and collect() to force GC) in a child node with --expose-gc: its JSON result. */
function inChild(body) {
  const script = `
    import { init, artifacts, CheckpointState, Module, Optimizer, InferenceSession, Tensor } from ${JSON.stringify(index)};
    import { WebtrainWorker } from ${JSON.stringify(workerHost)};
    const core = await init({ threads: 1 });
    const model = ${JSON.stringify(model)};
    const settle = () => new Promise((r) => setTimeout(r, 0));
    // the registry's callbacks run in tasks after a collection
    const collect = async () => { for (let i = 0; i < 3; i++) { globalThis.gc(); await settle(); } };
    const result = await (async () => { ${body} })();
    process.stdout.write(JSON.stringify(result));
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 240_000 });
  assert.equal(r.status, 0, `child failed:\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('create / train / drop cycles without release() stay flat in the heap and in RSS', () => {
  const r = inChild(`
    const art = await artifacts.generateArtifacts(model, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
    const x = new Tensor(new Float32Array(8 * 784).fill(0.5), [8, 784]);
    const y = new Tensor(new Int32Array(8).fill(3), [8]);
    const at = {};
    for (let cycle = 1; cycle <= 100; cycle++) {
      const state = await CheckpointState.loadCheckpoint(art.checkpoint);
      const module = await Module.create(art.trainingModel, state, art.evalModel);
      const optimizer = await Optimizer.create(art.optimizerModel, module);
      module.run(x, y);
      optimizer.step();
      module.eval().run(x, y);
      const session = await InferenceSession.create(model);
      session.runSync({ input: x });
      // (the collector does not see the wasm heap: left to itself it may run after many cycles)
      await collect();
      if (cycle === 20 || cycle === 100) at[cycle] = { heap: core.heapStats().mallocInUse, rss: process.memoryUsage().rss };
    }
    return at;
  `);
  const heap = r[100].heap - r[20].heap;
  const rss = r[100].rss - r[20].rss;
  // One cycle holds about 2.5 MB in the heap (parameters, gradients, moments, plans): 80 cycles
  // kept would be some 200 MB.
  assert.ok(heap < 1 << 20, `the heap in use grew by ${heap} bytes from cycle 20 to 100`);
  assert.ok(rss < 24 << 20, `RSS grew by ${rss >> 20} MiB from cycle 20 to 100`);
});

test('an optimizer alone keeps its module and state alive; release() frees at once, then does nothing', () => {
  const r = inChild(`
    const art = await artifacts.generateArtifacts(model, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
    const x = new Tensor(new Float32Array(8 * 784).fill(0.5), [8, 784]);
    const y = new Tensor(new Int32Array(8).fill(3), [8]);
    const base = core.heapStats().mallocInUse;
    const optimizer = await (async () => {
      const state = await CheckpointState.loadCheckpoint(art.checkpoint);
      const module = await Module.create(art.trainingModel, state, art.evalModel);
      return Optimizer.create(art.optimizerModel, module);
    })();
    await collect();
    const losses = [];
    for (let i = 0; i < 3; i++) {
      losses.push(optimizer.module.run(x, y).data[0]);
      optimizer.step();
      optimizer.module.lazyResetGrad();
      await collect();
    }
    const { module } = optimizer;
    const { state } = module;
    state.release(); // used by the module and the optimizer still: freed after them
    module.run(x, y);
    optimizer.release();
    module.release();
    const freed = core.heapStats().mallocInUse - base;
    state.release();
    module.release();
    await collect();
    return { losses, freed, after: core.heapStats().mallocInUse - base };
  `);
  assert.ok(r.losses[2] < r.losses[0], `training went on: ${r.losses}`);
  // what is left is the core's per-process caches (the generator's, the staging of this
  // realm): well below one module's 2.5 MB
  assert.ok(r.freed < 256 << 10, `${r.freed} bytes still in use after release()`);
  assert.equal(r.after, r.freed);
});

test("a worker object's proxy collected without release() has the worker drop the object", () => {
  const r = inChild(`
    const posted = [];
    const port = { postMessage: (msg) => posted.push(msg), terminate() {} };
    const w = new WebtrainWorker(port);
    // two calls answered with worker objects #7 and #8, as the worker answers Module.create
    const answer = async (ref) => {
      const p = w.runtimeInfo();
      port.onmessage({ data: { id: posted.at(-1).id, value: { __ref: ref, kind: 'Module' } } });
      return p;
    };
    let dropped = await answer(7);
    const kept = await answer(8);
    const same = (await answer(8)) === kept;
    dropped = null;
    await collect();
    return { drops: posted.filter((m) => m.drop !== undefined).map((m) => m.drop), same, kept: typeof kept.run };
  `);
  assert.deepEqual(r.drops, [7]);
  assert.equal(r.same, true, 'one proxy per worker object');
});
