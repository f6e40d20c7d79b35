// The shipped TypeScript declarations (js/*.d.ts) type-check a program using the whole public
// API (tests/types/usage.ts, including misuses marked @ts-expect-error that they must reject),
// and a file with a deliberate type error is rejected, so the check cannot pass vacuously.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = `${root}node_modules/.bin/tsc`;

function runTsc(project) {
  assert.ok(existsSync(tsc), `${tsc} is missing: run npm install (typescript is a dev dependency)`);
  const r = spawnSync(tsc, ['--noEmit', '-p', project], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

test('tsc accepts tests/types/usage.ts against the declarations', () => {
  const { status, output } = runTsc('tests/types');
  assert.equal(status, 0, `tsc --noEmit -p tests/types failed:\n${output}`);
});

test('tsc rejects a file with a deliberate type error', () => {
  const { status, output } = runTsc('tests/types/negative');
  assert.notEqual(status, 0, `tsc accepted tests/types/negative/bad.ts, which has a type error:\n${output}`);
  // Rejected for the planted error (setLearningRate('0.01')), not because something is missing.
  assert.match(output, /bad\.ts\(6,\d+\): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'/);
  assert.doesNotMatch(output, /TS2307|TS2305|TS5\d{3}/, `unexpected errors (module resolution or config):\n${output}`);
  assert.equal(output.split('\n').filter((l) => / error TS/.test(l)).length, 1, `expected exactly one error:\n${output}`);
});
