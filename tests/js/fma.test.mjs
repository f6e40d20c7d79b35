// The relaxed-SIMD (fused multiply-add) builds in Node: init() loads
// dist/webtrain-core-fma.wasm (or dist/mt/webtrain-core-mt-fma.wasm) where WebAssembly.validate
// accepts a relaxed-SIMD probe — Node 20 only with --experimental-wasm-relaxed-simd — and the
// SIMD128 build silently without the flag; init({ simd }) forces either. Matrix products of the
// FMA build are checked against a float64 reference (and against the SIMD128 build), the golden
// cases train to the same bits at 1, 2 and 4 threads within the FMA build, and the post-link
// rewrite (scripts/wasm-relaxed.mjs) is checked on the shipped files and on hand-made modules.
// (The golden vectors and ONNX node tests run on the FMA build in scripts/test.sh.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rewriteRelaxed, countRelaxed, leb } from '../../scripts/wasm-relaxed.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const FLAG = '--experimental-wasm-relaxed-simd';

/** Runs an ES module script (webtrain imported from `pkg`) in a fresh Node with `flags`; returns its JSON output. */
function run(body, { flags = [], pkg = root } = {}) {
  const script = `import * as wt from ${JSON.stringify(join(pkg, 'js/index.js'))};\nconst out = {};\n${body}\nconsole.log(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `node exited with ${r.status} ${r.signal ?? ''}:\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

const INFO = (opts) => `
try { await wt.init(${JSON.stringify(opts)}); out.info = wt.runtimeInfo(); } catch (e) { out.error = e.name + ': ' + e.message; }`;

test('without --experimental-wasm-relaxed-simd (Node 20): the SIMD128 build, silently; simd: "relaxed" is a clear error', () => {
  assert.deepEqual(run(INFO({ threads: 1 })).info, { threads: 1, simd: 'wasm-simd128', crossOriginIsolated: false, build: 'single', backend: 'wasm', adapter: null });
  assert.equal(run(INFO({ threads: 2 })).info.simd, 'wasm-simd128');
  const forced = run(INFO({ simd: 'relaxed' }));
  assert.match(forced.error, /^WebtrainError: init\(\{ simd: 'relaxed' \}\): this engine does not run WebAssembly Relaxed SIMD .*--experimental-wasm-relaxed-simd.*simd: 'auto'/);
  assert.match(run(INFO({ simd: 'fma' })).error, /^WebtrainError: init\(\{ simd \}\): expected 'auto', 'relaxed' or 'simd128', got 'fma'/);
});

test('with the flag: runtimeInfo() reports the relaxed-SIMD build, single-threaded and threaded; simd: "simd128" forces SIMD128', () => {
  const flags = [FLAG];
  assert.deepEqual(run(INFO({ threads: 1 }), { flags }).info, { threads: 1, simd: 'wasm-relaxed-simd', crossOriginIsolated: false, build: 'single', backend: 'wasm', adapter: null });
  const mt = run(INFO({ threads: 2, simd: 'relaxed' }), { flags }).info;
  assert.equal(mt.simd, 'wasm-relaxed-simd');
  assert.equal(mt.build, 'threaded');
  assert.deepEqual(run(INFO({ threads: 1, simd: 'simd128' }), { flags }).info.simd, 'wasm-simd128');
  assert.deepEqual(run(INFO({ threads: 2, simd: 'simd128' }), { flags }).info.simd, 'wasm-simd128');
  // A given location is used as it is: the SIMD128 .wasm there.
  assert.equal(run(INFO({ wasmUrl: join(root, 'dist/webtrain-core.wasm') }), { flags }).info.simd, 'wasm-simd128');
});

test('a package without the relaxed-SIMD .wasm files: the SIMD128 build under "auto", an error naming the file under "relaxed"', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wt-fma-'));
  try {
    for (const d of ['js', 'dist']) cpSync(join(root, d), join(dir, d), { recursive: true });
    cpSync(join(root, 'package.json'), join(dir, 'package.json'));
    rmSync(join(dir, 'dist/webtrain-core-fma.wasm'));
    rmSync(join(dir, 'dist/mt/webtrain-core-mt-fma.wasm'));
    const flags = [FLAG];
    assert.equal(run(INFO({ threads: 1 }), { flags, pkg: dir }).info.simd, 'wasm-simd128');
    assert.deepEqual(run(INFO({ threads: 2 }), { flags, pkg: dir }).info, { threads: 2, simd: 'wasm-simd128', crossOriginIsolated: false, build: 'threaded', backend: 'wasm', adapter: null });
    assert.match(run(INFO({ threads: 1, simd: 'relaxed' }), { flags, pkg: dir }).error, /cannot load webtrain's WebAssembly core from .*dist\/webtrain-core-fma\.wasm: ENOENT/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- matrix products: Y = MatMul(A, B) through InferenceSession, against a float64 reference ----

/** A one-node ONNX model, Y = MatMul(A, B), A [M, K], B [K, N], float32 (protobuf written by hand). */
function matmulModel(M, K, N) {
  const varint = (n) => leb(n);
  const len = (field, bytes) => [(field << 3) | 2, ...varint(bytes.length), ...bytes];
  const int = (field, v) => [field << 3, ...varint(v)];
  const str = (field, s) => len(field, [...Buffer.from(s)]);
  const dims = (ds) => ds.flatMap((d) => len(1, int(1, d)));
  const value = (name, ds) => [...str(1, name), ...len(2, len(1, [...int(1, 1), ...len(2, dims(ds))]))];
  const node = [...str(1, 'A'), ...str(1, 'B'), ...str(2, 'Y'), ...str(4, 'MatMul')];
  const graph = [...len(1, node), ...str(2, 'g'), ...len(11, value('A', [M, K])), ...len(11, value('B', [K, N])), ...len(12, value('Y', [M, N]))];
  return Uint8Array.from([...int(1, 8), ...len(8, [...str(1, ''), ...int(2, 17)]), ...len(7, graph)]);
}

const SHAPES = [[7, 13, 5], [64, 784, 128], [129, 300, 67], [256, 256, 256], [3, 1000, 10], [64, 1030, 600], [70, 520, 40]];

/** Y for each shape on the build `flags` and `simd` select: base64 of the float32 bits. */
function products(flags, simd) {
  return run(`
await wt.init({ threads: 1, simd: ${JSON.stringify(simd)} });
out.simd = wt.runtimeInfo().simd;
out.y = [];
for (const [M, K, N, model] of ${JSON.stringify(SHAPES.map(([M, K, N]) => [M, K, N, Buffer.from(matmulModel(M, K, N)).toString('base64')]))}) {
  const fill = (n, s) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + s) * 0.5);
  const session = await wt.InferenceSession.create(Buffer.from(model, 'base64'));
  const y = (await session.run({ A: new wt.Tensor('float32', fill(M * K, 1), [M, K]), B: new wt.Tensor('float32', fill(K * N, 2), [K, N]) })).Y.data;
  out.y.push(Buffer.from(y.buffer, y.byteOffset, y.byteLength).toString('base64'));
  session.release();
}`, { flags });
}

test('MatMul on the relaxed-SIMD build: within float32 error bounds of a float64 reference, like the SIMD128 build', () => {
  const fma = products([FLAG], 'relaxed');
  const plain = products([], 'simd128');
  assert.equal(fma.simd, 'wasm-relaxed-simd');
  assert.equal(plain.simd, 'wasm-simd128');
  const fill = (n, s) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + s) * 0.5);
  let differ = 0;
  const err = { fma: 0, plain: 0 };
  SHAPES.forEach(([M, K, N], si) => {
    const a = fill(M * K, 1);
    const b = fill(K * N, 2);
    const got = (s) => new Float32Array(Uint8Array.from(Buffer.from(s.y[si], 'base64')).buffer);
    const [yf, yp] = [got(fma), got(plain)];
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let ref = 0;
        let mag = 0;
        for (let k = 0; k < K; k++) {
          ref += a[i * K + k] * b[k * N + j];
          mag += Math.abs(a[i * K + k] * b[k * N + j]);
        }
        // Recursive summation in float32 (any order, fused or not): |error| <= ~K * 2^-24 * sum|a b|.
        const bound = (K + 2) * 2 ** -24 * mag + 1e-30;
        for (const [name, y] of [['fma', yf], ['plain', yp]]) {
          const e = Math.abs(y[i * N + j] - ref);
          assert.ok(e <= bound, `${name} ${M}x${K}x${N} [${i},${j}]: ${y[i * N + j]} vs ${ref} (error ${e}, bound ${bound})`);
          err[name] += e / (mag || 1);
        }
        if (yf[i * N + j] !== yp[i * N + j]) differ++;
      }
    }
  });
  // Where the CPU has FMA (x86-64 with FMA3, which V8 uses for relaxed_madd), the products are
  // fused: other bits than the SIMD128 build's, and no less accurate overall.
  const cpuFma = /\bfma\b/.test(existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '');
  if (cpuFma) {
    assert.ok(differ > 0, 'the relaxed-SIMD build gave the same bits as the SIMD128 build: not fused');
    assert.ok(err.fma <= err.plain * 1.05, `fused products less accurate than unfused: ${err.fma} vs ${err.plain}`);
  }
});

test('within the relaxed-SIMD build, every golden case trains to the same bits at 1, 2 and 4 threads', () => {
  const dirs = ['tests/golden/cases', 'tests/golden/cases-models'].flatMap((d) =>
    readdirSync(join(root, d), { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(root, d, e.name, 'case.json')))
      .map((e) => join(root, d, e.name)),
  );
  const bits = (threads) => {
    const r = spawnSync(process.execPath, [FLAG, join(root, 'tests/golden/bits.mjs'), String(threads), ...dirs], { encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, `bits.mjs ${threads} exited with ${r.status} ${r.signal ?? ''}:\n${r.stdout}\n${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').at(-1));
  };
  const one = bits(1);
  assert.deepEqual(one.runtime, { threads: 1, simd: 'wasm-relaxed-simd', crossOriginIsolated: false, build: 'single', backend: 'wasm', adapter: null });
  assert.equal(Object.keys(one.cases).length, dirs.length);
  for (const threads of [2, 4]) {
    const mt = bits(threads);
    assert.equal(mt.runtime.simd, 'wasm-relaxed-simd');
    assert.equal(mt.runtime.build, 'threaded');
    for (const [name, r] of Object.entries(one.cases)) assert.equal(mt.cases[name]?.digest, r.digest, `${name}: other bits at ${threads} threads`);
  }
});

// ---- the post-link rewrite ----

test('the shipped relaxed-SIMD .wasm files: final relaxed_madd only, and wabt validates them', () => {
  for (const f of ['dist/webtrain-core-fma.wasm', 'dist/mt/webtrain-core-mt-fma.wasm']) {
    const c = countRelaxed(readFileSync(join(root, f)));
    assert.equal(c.prototype, 0, `${f}: prototype f32x4.fma left`);
    assert.ok(c.madd > 50, `${f}: ${c.madd} relaxed_madd`);
    const v = spawnSync('wasm-validate', ['--enable-relaxed-simd', '--enable-threads', join(root, f)], { encoding: 'utf8' });
    assert.equal(v.status, 0, `wasm-validate ${f}: ${v.stderr}`);
  }
  for (const f of ['dist/webtrain-core.wasm', 'dist/mt/webtrain-core-mt.wasm']) assert.deepEqual(countRelaxed(readFileSync(join(root, f))), { madd: 0, prototype: 0 }, f);
});

/** A module exporting f(x, y, z) = the prototype f32x4.fma(x, y, z) (= x + y * z), with one i32 local of its own. */
function prototypeModule(body = [0x20, 0, 0x20, 1, 0x20, 2, 0xfd, 0xaf, 0x01]) {
  const code = [1, 1, 0x7f, ...body, 0x0b]; // one declaration: 1 x i32
  const sec = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
  return Uint8Array.from([
    0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...sec(1, [1, 0x60, 3, 0x7b, 0x7b, 0x7b, 1, 0x7b]),
    ...sec(3, [1, 0]),
    ...sec(7, [1, 1, 0x66, 0, 0]),
    ...sec(10, [1, ...leb(code.length), ...code]),
  ]);
}

test('scripts/wasm-relaxed.mjs keeps the prototype meaning x + y * z (operands reordered), and rejects what it cannot decode', () => {
  const { bytes, count } = rewriteRelaxed(prototypeModule());
  assert.equal(count, 1);
  assert.deepEqual(countRelaxed(bytes), { madd: 1, prototype: 0 });
  // v128 cannot cross into JavaScript: g(x, y, z) of lane0Module() calls f on splats and returns lane 0.
  const direct = `
const { f } = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(${JSON.stringify(Buffer.from(bytes).toString('base64'))}, 'base64'))).exports;
const g = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(${JSON.stringify(Buffer.from(lane0Module()).toString('base64'))}, 'base64')), { m: { f } }).exports.g;
console.log(g(1, 2, 3));`;
  const out = spawnSync(process.execPath, [FLAG, '-e', direct], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(Number(out.stdout.trim()), 7, 'f(1, 2, 3) = 1 + 2 * 3 (the prototype meaning), not 1 * 2 + 3');
  // Unknown opcodes stop the rewrite with their offset; a module without the prototype op is returned as is.
  assert.throws(() => rewriteRelaxed(prototypeModule([0xfd, 0xb0, 0x01])), /unknown SIMD instruction 0xfd b0 in function 0 at offset/);
  assert.throws(() => rewriteRelaxed(prototypeModule([0x06])), /unknown opcode 0x6 in function 0/);
  const plain = prototypeModule([0x20, 0, 0x20, 1, 0xfd, 0xe4, 0x01, 0x20, 2, 0xfd, 0xe6, 0x01]);
  assert.equal(rewriteRelaxed(plain).bytes, plain);
  assert.throws(() => rewriteRelaxed(Uint8Array.of(1, 2, 3)), /not a WebAssembly binary/);
});

/** A module importing m.f (v128 x3 -> v128) and exporting g(x, y, z: f32) = lane 0 of f(splat x, splat y, splat z). */
function lane0Module() {
  const sec = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
  const body = [0, 0x20, 0, 0xfd, 0x13, 0x20, 1, 0xfd, 0x13, 0x20, 2, 0xfd, 0x13, 0x10, 0, 0xfd, 0x1f, 0, 0x0b];
  return Uint8Array.from([
    0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...sec(1, [2, 0x60, 3, 0x7b, 0x7b, 0x7b, 1, 0x7b, 0x60, 3, 0x7d, 0x7d, 0x7d, 1, 0x7d]),
    ...sec(2, [1, 1, 0x6d, 1, 0x66, 0, 0]),
    ...sec(3, [1, 1]),
    ...sec(7, [1, 1, 0x67, 0, 1]),
    ...sec(10, [1, ...leb(body.length), ...body]),
  ]);
}
