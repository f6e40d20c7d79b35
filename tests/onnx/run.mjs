#!/usr/bin/env node
// Runs ONNX backend-test directories (model.onnx + test_data_set_N/input_K.pb, output_K.pb) in
// webtrain's WebAssembly build and compares every output:
//   |actual - expected| <= atol + rtol * |expected|   (rtol 1e-4, atol 1e-5 unless given)
// Usage:
//   node tests/onnx/run.mjs [--rtol R] [--atol A] DIR...
//   node tests/onnx/run.mjs --allowlist tests/onnx/allowlist.txt [--cases DIR]
// (the allowlist form runs every listed case with its own tolerance override, if any).
// Prints one line per case and "N passed, M failed (the build's SIMD)"; exits 1 if any case failed.
import { readFile, readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { InferenceSession, Tensor, runtimeInfo } from '../../js/index.js';
import { decodeTensorProto } from '../tensor-proto.mjs';

function parseArgs(argv) {
  const opts = { rtol: 1e-4, atol: 1e-5, dirs: [], allowlist: null, cases: resolve('build/onnx-node-tests') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--rtol') opts.rtol = Number(argv[++i]);
    else if (a === '--atol') opts.atol = Number(argv[++i]);
    else if (a === '--allowlist') opts.allowlist = argv[++i];
    else if (a === '--cases') opts.cases = argv[++i];
    else opts.dirs.push({ dir: a });
  }
  return opts;
}

async function allowlistCases(file, casesDir) {
  const out = [];
  for (const raw of (await readFile(file, 'utf8')).split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const [name, ...rest] = line.split(/\s+/);
    const c = { dir: join(casesDir, name) };
    for (const r of rest) {
      const m = /^(rtol|atol)=(.+)$/.exec(r);
      if (m) c[m[1]] = Number(m[2]);
    }
    out.push(c);
  }
  return out;
}

function compare(name, expected, actual, rtol, atol) {
  if (expected.type !== actual.type) return `output '${name}': type ${actual.type}, expected ${expected.type}`;
  if (expected.dims.join() !== actual.dims.join()) return `output '${name}': shape [${actual.dims}], expected [${expected.dims}]`;
  const e = expected.data;
  const a = actual.data;
  for (let i = 0; i < e.length; i++) {
    let ok;
    if (expected.type === 'float32') {
      if (Number.isNaN(e[i])) ok = Number.isNaN(a[i]);
      else if (!Number.isFinite(e[i])) ok = a[i] === e[i];
      else ok = Math.abs(a[i] - e[i]) <= atol + rtol * Math.abs(e[i]);
    } else {
      ok = a[i] === e[i];
    }
    if (!ok) return `output '${name}'[${i}]: expected ${e[i]}, got ${a[i]}`;
  }
  return null;
}

async function loadPb(path) {
  return (await decodeTensorProto(new Uint8Array(await readFile(path)))).tensor;
}

async function runCase(dir, rtol, atol) {
  const session = await InferenceSession.create(join(dir, 'model.onnx'));
  try {
    const sets = (await readdir(dir)).filter((n) => /^test_data_set_\d+$/.test(n)).sort();
    if (!sets.length) return 'no test_data_set_0 directory';
    for (const set of sets) {
      const feeds = {};
      for (let k = 0; k < session.inputNames.length; k++) feeds[session.inputNames[k]] = await loadPb(join(dir, set, `input_${k}.pb`));
      const outputs = await session.run(feeds);
      for (let k = 0; k < session.outputNames.length; k++) {
        const name = session.outputNames[k];
        const why = compare(name, await loadPb(join(dir, set, `output_${k}.pb`)), outputs[name], rtol, atol);
        if (why) return `${set}: ${why}`;
      }
    }
    return null;
  } finally {
    session.release();
  }
}

const opts = parseArgs(process.argv.slice(2));
const cases = opts.allowlist ? await allowlistCases(opts.allowlist, opts.cases) : opts.dirs;
if (!cases.length) {
  console.error('usage: node tests/onnx/run.mjs [--rtol R] [--atol A] DIR...  |  --allowlist FILE [--cases DIR]');
  process.exit(2);
}
let passed = 0;
let failed = 0;
for (const c of cases) {
  const label = opts.allowlist ? basename(c.dir) : c.dir.replace(/\/+$/, '');
  let why;
  try {
    why = await runCase(c.dir, c.rtol ?? opts.rtol, c.atol ?? opts.atol);
  } catch (err) {
    why = err.message;
  }
  if (why) {
    failed++;
    console.log(`FAIL ${label}: ${why}`);
  } else {
    passed++;
    console.log(`ok   ${label}`);
  }
}
console.log(`${passed} passed, ${failed} failed (${runtimeInfo()?.simd ?? 'core not loaded'})`);
process.exit(failed ? 1 : 0);
