#!/usr/bin/env node
// Where webtrain's training step spends its time: runs the benchmark worker for one model under
// `node --cpu-prof` and prints the functions with the most self time (wasm functions are named
// only if the core was linked with --profiling-funcs; see tests/bench/README.md).
//   node tests/bench/profile.mjs KEY [STEPS] [--js DIR] [--relaxed]   (DIR: a js/ folder next to its dist/;
//   --relaxed: Node runs with --experimental-wasm-relaxed-simd, so the core loads its FMA build)
// Needs build/bench-models/KEY/ from a previous `node tests/bench/run.mjs` (or worker prepare).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { ROOT, OUT_DIR } from './models.mjs';

const args = process.argv.slice(2);
const jsAt = args.indexOf('--js');
// Absolute: the worker imports it as a module specifier (a bare relative path would be a package).
const js = jsAt >= 0 ? resolve(args.splice(jsAt, 2)[1]) : `${OUT_DIR}prof/js/`;
const relaxedAt = args.indexOf('--relaxed');
const relaxed = relaxedAt >= 0 ? args.splice(relaxedAt, 1).length > 0 : false;
const [key, steps = '300'] = args;
if (!key) {
  console.error('usage: node tests/bench/profile.mjs MODEL_KEY [STEPS] [--js DIR] [--relaxed]');
  process.exit(2);
}
const dir = `${OUT_DIR}prof/cpuprofile-${key}/`;
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
// --no-liftoff as in run.mjs: without it the first steps run in V8's baseline tier and the
// profile mixes tiers.
const r = spawnSync(process.execPath, ['--no-liftoff', ...(relaxed ? ['--experimental-wasm-relaxed-simd'] : []), '--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=200', `${ROOT}tests/bench/worker.mjs`, 'run', 'webtrain', key, steps, '10', '1'], {
  encoding: 'utf8',
  env: { ...process.env, WT_BENCH_JS: js.endsWith('/') ? js : `${js}/`, WT_BENCH_WARMUP_MS: '500' },
});
const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith('RESULT '));
if (!line) {
  console.error(r.stderr || r.stdout);
  process.exit(1);
}
const res = JSON.parse(line.slice(7));
if (res.error) {
  console.error(res.error);
  process.exit(1);
}
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const prof = JSON.parse(readFileSync(dir + file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = prof.timeDeltas;
for (let i = 0; i < prof.samples.length; i++) {
  const n = byId.get(prof.samples[i]);
  const name = n.callFrame.functionName || `(anonymous ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber})`;
  self.set(name, (self.get(name) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const skip = new Set(['(idle)', '(program)', '(garbage collector)']);
const busy = [...self.entries()].filter(([n]) => !skip.has(n)).reduce((a, [, v]) => a + v, 0);
console.log(`${key}: webtrain ${res.stepMs.toFixed(2)} ms/step (median), profile ${(total / 1e3).toFixed(0)} ms sampled, ${(busy / 1e3).toFixed(0)} ms in named code; ${dir}${file}`);
console.log('self time  share  function');
for (const [name, us] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
  console.log(`${(us / 1e3).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
}
// Inclusive time (self + callees, each function counted once per sample even if recursive):
// the op run functions (`*_run`) then show what each op costs with its kernels.
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map();
for (let i = 0; i < prof.samples.length; i++) {
  const seen = new Set();
  for (let id = prof.samples[i]; id !== undefined; id = parent.get(id)) {
    const name = byId.get(id).callFrame.functionName;
    if (!name || seen.has(name)) continue;
    seen.add(name);
    incl.set(name, (incl.get(name) ?? 0) + (dt[i] ?? 0));
  }
}
console.log('inclusive  share  function');
for (const [name, us] of [...incl.entries()].filter(([n]) => !skip.has(n)).sort((a, b) => b[1] - a[1]).slice(0, 40)) {
  console.log(`${(us / 1e3).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
}
