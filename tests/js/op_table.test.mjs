// docs/ops.md, the table of supported ops, is generated from the registry and kept current.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

test('docs/ops.md matches the op registry', () => {
  const r = spawnSync(process.execPath, [new URL('../../scripts/gen_op_table.mjs', import.meta.url).pathname, '--check'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
});
