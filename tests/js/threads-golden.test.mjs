// Every golden case (tests/golden/cases, tests/golden/cases-models) trains to the same bits —
// every step's loss, every gradient, every parameter after every step, the eval loss — on the
// single-threaded build and on the threaded build at 2 and 4 threads. Each thread
// count runs in a process of its own (tests/golden/bits.mjs): the core is loaded once per
// process. Before the C side's thread pool lands the threaded build runs its kernels on one
// thread, and this checks the two builds agree; with the pool it checks the split kernels.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dirs = ['tests/golden/cases', 'tests/golden/cases-models'].flatMap((d) =>
  readdirSync(join(root, d), { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(root, d, e.name, 'case.json')))
    .map((e) => join(root, d, e.name)),
);

function bits(threads) {
  const r = spawnSync(process.execPath, [join(root, 'tests/golden/bits.mjs'), String(threads), ...dirs], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, `bits.mjs ${threads} exited with ${r.status} ${r.signal ?? ''}:\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

test('every golden case trains to the same bits on the single-threaded build and at 2 and 4 threads', () => {
  assert.ok(dirs.length >= 14, `golden cases found: ${dirs.length}`);
  const one = bits(1);
  assert.equal(one.runtime.build, 'single');
  assert.equal(Object.keys(one.cases).length, dirs.length);
  for (const threads of [2, 4]) {
    const mt = bits(threads);
    assert.equal(mt.runtime.build, 'threaded');
    assert.ok(mt.runtime.threads === threads || mt.runtime.threads === 1, `threads ${mt.runtime.threads} (wanted ${threads})`);
    for (const [name, r] of Object.entries(one.cases)) {
      assert.ok(r.steps > 0, `${name}: no steps`);
      assert.equal(mt.cases[name]?.digest, r.digest, `${name}: other bits at ${threads} threads than on the single-threaded build`);
    }
  }
});
