// The benchmark's --backend webgpu runs (on the software adapter here: the path, not the speed)
// and reports what it promises: GEMM GFLOP/s per size, and per model (the MLP, a golden case's
// CNN) ms per run or step on both backends with the dispatches, submits and bytes read back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

test('node tests/bench/run.mjs --backend webgpu', () => {
  const json = join(mkdtempSync(join(tmpdir(), 'wt-bench-')), 'webgpu.json');
  const run = new URL('../bench/run.mjs', import.meta.url).pathname;
  const r = spawnSync(process.execPath, [run, '--backend', 'webgpu', '--sizes', '16,32', '--chain', '2', '--runs', '1', '--cases', 'cases/cnn_bn_ce_sgd', '--json', json], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, r.stderr + r.stdout);
  const out = JSON.parse(readFileSync(json, 'utf8'));
  assert.ok(out.adapter.limits.maxBufferSize > 0);
  assert.deepEqual(out.gemm.map((g) => g.n), [16, 32]);
  for (const g of out.gemm) assert.ok(g.gflops > 0 && g.ms > 0);
  assert.equal(out.models.length, 5);
  for (const m of out.models) {
    assert.ok(m.wasm > 0 && m.webgpu > 0 && m.dispatches > 0, JSON.stringify(m));
    assert.equal(m.submits, /training step/.test(m.model) ? 2 : 1); // the step's graph, then the optimizer's update
  }
  assert.match(r.stdout, /mlp_784_128_10 training step b32: wasm [\d.]+ ms, webgpu [\d.]+ ms \(\d+ dispatches, 2 submits/);
  assert.match(r.stdout, /cnn_bn_ce_sgd training step b\d+: wasm [\d.]+ ms, webgpu [\d.]+ ms \(\d+ dispatches, 2 submits, \d+ bytes read back/);
});
