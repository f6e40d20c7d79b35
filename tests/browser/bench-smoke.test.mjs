// The Chromium benchmark path (tests/bench/chromium.mjs, run by `node tests/bench/run.mjs --env
// chromium`; the benchmark itself is not part of npm test) on its smallest model for a few
// steps: webtrain and onnxruntime-web 1.19.2 at 1 and 2 threads in a Web Worker of a
// cross-origin-isolated page, on artifacts webtrain generated in Node. Checks that every
// measurement gives finite numbers and that 2 threads are 2 threads (webtrain's threaded build,
// ORT not falling back), so that the path does not rot. Speed is not asserted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { root } from './harness.mjs';

const MODELS = `${root}build/bench-smoke/models/`; // not the benchmark's own folder: a run may be going on
const KEY = 'mlp_784_128_10';
let bench;
let spec;

before(async () => {
  process.env.WT_BENCH_MODELS_DIR = MODELS; // read by tests/bench/models.mjs (imported below)
  mkdirSync(MODELS, { recursive: true });
  const mm = spawnSync('/usr/bin/python3', [`${root}tests/bench/make_models.py`, MODELS], { encoding: 'utf8' });
  assert.equal(mm.status, 0, `make_models.py: ${mm.stderr}`);
  const prep = spawnSync(process.execPath, [`${root}tests/bench/worker.mjs`, 'prepare', KEY], { encoding: 'utf8', env: process.env });
  assert.match(prep.stdout, /^RESULT \{"prepared"/m, `worker.mjs prepare: ${prep.stdout}${prep.stderr}`);
  const { startChromium } = await import('../bench/chromium.mjs');
  const { modelSpecs } = await import('../bench/models.mjs');
  spec = modelSpecs().find((s) => s.key === KEY);
  bench = await startChromium({ liftoff: true }); // V8's default tiering: quick to start
});

after(async () => {
  await bench?.close();
});

const finite = (x) => typeof x === 'number' && Number.isFinite(x);

for (const threads of [1, 2]) {
  test(`Chromium benchmark, ${KEY}, ${threads} thread(s): webtrain and onnxruntime-web give finite numbers on the same artifacts`, async () => {
    const job = { spec, threads, steps: 5, warmup: 2, evals: 2, warmupMs: 0 };
    const wt = await bench.measure({ ...job, runtime: 'webtrain' });
    const ort = await bench.measure({ ...job, runtime: 'ort' });
    for (const r of [wt, ort]) {
      assert.equal(r.error, undefined, `${r.runtime}: ${r.error}`);
      assert.equal(r.env, 'chromium');
      assert.equal(r.crossOriginIsolated, true, 'the benchmark page is cross-origin isolated');
      assert.equal(r.threads, threads);
      assert.equal(r.threadsReported, threads, `${r.runtime} runs ${r.threadsReported} thread(s), ${threads} wanted`);
      for (const f of ['stepMs', 'evalMs', 'loss0', 'loss', 'gflops']) assert.ok(finite(r[f]) && r[f] > 0, `${r.runtime} ${f} = ${r[f]}`);
      assert.equal(r.train.n, 5);
      assert.ok(r.heapBytes >= 1 << 20, `${r.runtime} wasm Memory ${r.heapBytes}`);
    }
    assert.equal(wt.build, threads > 1 ? 'threaded' : 'single');
    assert.ok(wt.mallocPeakBytes > 0 && wt.mallocPeakBytes <= wt.heapBytes, `malloc peak ${wt.mallocPeakBytes}, Memory ${wt.heapBytes}`);
    // The same artifacts and the same first batch: the same first loss (up to float rounding).
    assert.ok(Math.abs(wt.loss0 - ort.loss0) < 1e-4, `first loss: webtrain ${wt.loss0}, ORT ${ort.loss0}`);
  });
}
