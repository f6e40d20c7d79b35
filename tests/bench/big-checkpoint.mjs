#!/usr/bin/env node
// A checkpoint over 2 GB, read and written back in Node, measured once (not part of
// npm test: it moves ~5 GB through the disk and needs ~2.5 GB of wasm memory):
//   node tests/bench/big-checkpoint.mjs [TENSORS] [MIB_PER_TENSOR]     (default 9 x 256 MiB)
// build/native/wt_big_checkpoint writes the checkpoint with external data (every float of
// tensor i at index j is pattern(i, j)); webtrain loads it (the side file streamed into the
// wasm heap), values are checked at sampled indices, and it is saved again with external data:
// the two checkpoint files and the two side files must be identical (SHA-256).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckpointState, init, runtimeInfo } from '../../js/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tensors = Number(process.argv[2] ?? 9);
const mib = Number(process.argv[3] ?? 256);
const MB = 2 ** 20;
const log = (s) => console.error(`[big-checkpoint ${(performance.now() / 1000).toFixed(1)}s] ${s}`);

/** tests/bench/big_checkpoint.c's pattern(i, j), in float32. */
const pattern = (i, j) => Math.fround(Math.fround(Number((BigInt(j) * 2654435761n + BigInt(i) * 40503n) % 1000003n)) * Math.fround(1e-3));

async function sha256(path) {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 16 * MB })) h.update(chunk);
  return h.digest('hex');
}

const dir = await mkdtemp(join(tmpdir(), 'webtrain-bigckpt-'));
try {
  const src = join(dir, 'big.ckpt');
  const made = spawnSync(join(root, 'build/native/wt_big_checkpoint'), [src, String(tensors), String(mib)], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`wt_big_checkpoint failed (build it with bash scripts/build.sh): ${made.stderr}${made.error ?? ''}`);
  log(made.stdout.trim());
  const core = await init();
  log(`runtime ${JSON.stringify(runtimeInfo())}, load ${(await import('node:os')).loadavg()[0].toFixed(2)}`);

  let t = performance.now();
  const state = await CheckpointState.loadCheckpoint(src);
  const loadMs = performance.now() - t;
  const heap = core.heapStats();
  log(`loaded in ${(loadMs / 1000).toFixed(1)} s; wasm Memory ${(heap.memory / MB).toFixed(0)} MB, malloc in use ${(heap.mallocInUse / MB).toFixed(0)} MB, process RSS ${(process.memoryUsage().rss / MB).toFixed(0)} MB (peak ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB)`);

  const elems = (mib * MB) / 4;
  let checked = 0;
  for (const [name, p] of state.parameters) {
    const i = Number(name.slice(1));
    const data = p.data;
    if (data.length !== elems) throw new Error(`${name}: ${data.length} elements, expected ${elems}`);
    for (const j of [0, 1, 12345, elems >> 1, elems - 2, elems - 1]) {
      if (data[j] !== pattern(i, j)) throw new Error(`${name}[${j}] = ${data[j]}, expected ${pattern(i, j)}`);
      checked++;
    }
  }
  log(`${checked} sampled values match in ${state.parameters.size} tensors`);

  const out = join(dir, 'again.ckpt');
  t = performance.now();
  await CheckpointState.saveCheckpoint(state, out, { externalData: true });
  const saveMs = performance.now() - t;
  log(`saved in ${(saveMs / 1000).toFixed(1)} s`);
  const same = Buffer.compare(await readFile(src), await readFile(out)) === 0;
  const [a, b] = [await sha256(`${src}.data`), await sha256(`${out}.data`)];
  const size = (await stat(`${out}.data`)).size;
  console.log(JSON.stringify({ tensors, mibPerTensor: mib, sideBytes: size, loadSeconds: loadMs / 1000, saveSeconds: saveMs / 1000, wasmMemoryBytes: heap.memory, peakRssBytes: process.resourceUsage().maxRSS * 1024, checkpointFileIdentical: same, sideFileIdentical: a === b }));
  if (!same || a !== b) throw new Error('the saved checkpoint differs from the loaded one');
  log(`identical: checkpoint files and ${(size / 2 ** 30).toFixed(2)} GiB side files (sha256 ${a.slice(0, 16)}...)`);
  state.release();
} finally {
  await rm(dir, { recursive: true, force: true });
}
