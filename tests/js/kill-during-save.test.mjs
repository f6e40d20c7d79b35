// Crash safety of Node checkpoint saves: a child process saves two different checkpoints to the
// same path in a loop and is killed with SIGKILL at a random moment, 50 times. After every kill
// the file must load, and hold exactly the old or the new version — never a torn mix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifacts, CheckpointState } from '../../js/index.js';

const model = new URL('../golden/cases/mlp_ce_adamw/model.onnx', import.meta.url);

const CHILD = `
import { CheckpointState } from ${JSON.stringify(new URL('../../js/index.js', import.meta.url).href)};
import { readFile } from 'node:fs/promises';
const [a, b] = await Promise.all([readFile(process.argv[2]), readFile(process.argv[3])]);
const states = [await CheckpointState.loadCheckpoint(a), await CheckpointState.loadCheckpoint(b)];
process.stdout.write('ready\\n');
for (let i = 0; ; i++) await CheckpointState.saveCheckpoint(states[i % 2], process.argv[4]);
`;

test('a checkpoint save killed at any moment leaves the old or the new version', { timeout: 240_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'webtrain-kill-'));
  try {
    // Two checkpoints of the same model that differ in every parameter (and in size, via a property).
    const art = await artifacts.generateArtifacts(model, { loss: artifacts.LossType.CrossEntropyLoss });
    const s = await CheckpointState.loadCheckpoint(art.checkpoint);
    const versionA = s.toBytes();
    for (const [name, p] of s.parameters) s.parameters.set(name, p.data.map((x) => x + 1));
    s.properties.set('version', 'B, with a longer property to change the size');
    const versionB = s.toBytes();
    s.release();
    const { writeFile } = await import('node:fs/promises');
    const pa = join(dir, 'a.ckpt');
    const pb = join(dir, 'b.ckpt');
    const target = join(dir, 'checkpoint');
    await writeFile(pa, versionA);
    await writeFile(pb, versionB);
    await writeFile(target, versionA);
    const script = join(dir, 'child.mjs');
    await writeFile(script, CHILD);
    const seen = { A: 0, B: 0 };
    for (let round = 0; round < 50; round++) {
      const child = spawn(process.execPath, [script, pa, pb, target], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise((resolve, reject) => {
        child.stdout.once('data', resolve);
        child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
      });
      await new Promise((r) => setTimeout(r, Math.random() * 40));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const bytes = new Uint8Array(await readFile(target));
      const isA = Buffer.compare(Buffer.from(bytes), Buffer.from(versionA)) === 0;
      const isB = Buffer.compare(Buffer.from(bytes), Buffer.from(versionB)) === 0;
      assert.ok(isA || isB, `round ${round}: the checkpoint is neither version (${bytes.length} bytes)`);
      const loaded = await CheckpointState.loadCheckpoint(bytes);
      loaded.release();
      seen[isA ? 'A' : 'B']++;
    }
    // Leftover temporary files from killed saves are allowed, but the checkpoint never is one.
    const names = await readdir(dir);
    assert.ok(names.includes('checkpoint'));
    assert.ok(seen.A + seen.B === 50);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
