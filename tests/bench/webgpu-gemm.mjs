#!/usr/bin/env node
// WebGPU adapter probe, not part of the test suite: what the adapter in reach offers a training
// backend, measured with the kernel shape a WebGPU backend starts from (a register-tiled fp32
// GEMM: tiles in workgroup memory, a block of outputs per thread).
//
//   node tests/bench/webgpu-gemm.mjs [--sizes 512,1024,2048] [--json FILE]
//
// Needs the `webgpu` npm package (Dawn's Node bindings: `npm install --no-save webgpu`). On a
// machine without a GPU, Dawn finds SwiftShader when VK_ICD_FILENAMES names its ICD file
// (Debian's chromium ships /usr/lib/chromium/vk_swiftshader_icd.json): that proves the path,
// not the speed; keep --sizes at 256 or below there.
//
// Prints the adapter (vendor, architecture, description, limits, features), then for each tile
// variant: a check against a float64 reference on shapes that end inside a tile, and fp32
// GFLOP/s of C = A B at each size (n x n x n, dispatches queued back to back in one submit, wall
// time to onSubmittedWorkDone). Also the time to build one pipeline, the CPU cost of encoding one
// dispatch with a prebuilt bind group, and the latency of reading 4 bytes back.
import { writeFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const opt = (f) => {
  const i = argv.indexOf(f);
  return i >= 0 ? argv[i + 1] : undefined;
};
const SIZES = (opt('--sizes') ?? '512,1024,2048,4096').split(',').map(Number);
if (SIZES.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--sizes: expected whole numbers such as 512,1024; got '${opt('--sizes')}'`);

// Tile variants: BM x BN outputs per workgroup, TK deep slices of A and B in workgroup memory,
// RM x RN outputs per thread (threads own rows lid.y + r * TY and columns lid.x + c * TX, so a
// warp reads consecutive columns of the B tile and writes consecutive columns of C).
const VARIANTS = [
  { name: '32x32 tile, 4x4/thread', BM: 32, BN: 32, TK: 16, RM: 4, RN: 4 },
  { name: '64x64 tile, 4x4/thread', BM: 64, BN: 64, TK: 16, RM: 4, RN: 4 },
  { name: '128x128 tile, 8x8/thread', BM: 128, BN: 128, TK: 8, RM: 8, RN: 8 },
];

function gemmWgsl({ BM, BN, TK, RM, RN }) {
  const TX = BN / RN, TY = BM / RM, T = TX * TY;
  return /* wgsl */ `
struct Dims { M: u32, N: u32, K: u32, pad: u32 }
@group(0) @binding(0) var<storage, read_write> A: array<f32>;
@group(0) @binding(1) var<storage, read_write> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> d: Dims;
var<workgroup> As: array<f32, ${TK * BM}>;
var<workgroup> Bs: array<f32, ${TK * BN}>;

@compute @workgroup_size(${TX}, ${TY})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(local_invocation_index) li: u32) {
  let row0 = wg.y * ${BM}u;
  let col0 = wg.x * ${BN}u;
  var acc: array<f32, ${RM * RN}>;
  for (var k0 = 0u; k0 < d.K; k0 += ${TK}u) {
    for (var i = li; i < ${BM * TK}u; i += ${T}u) {
      let m = i / ${TK}u; let k = i % ${TK}u;
      let gm = row0 + m; let gk = k0 + k;
      var v = 0.0;
      if (gm < d.M && gk < d.K) { v = A[gm * d.K + gk]; }
      As[k * ${BM}u + m] = v;
    }
    for (var i = li; i < ${TK * BN}u; i += ${T}u) {
      let k = i / ${BN}u; let n = i % ${BN}u;
      let gk = k0 + k; let gn = col0 + n;
      var v = 0.0;
      if (gk < d.K && gn < d.N) { v = B[gk * d.N + gn]; }
      Bs[k * ${BN}u + n] = v;
    }
    workgroupBarrier();
    for (var k = 0u; k < ${TK}u; k++) {
      var a: array<f32, ${RM}>;
      var b: array<f32, ${RN}>;
      for (var r = 0u; r < ${RM}u; r++) { a[r] = As[k * ${BM}u + lid.y + r * ${TY}u]; }
      for (var c = 0u; c < ${RN}u; c++) { b[c] = Bs[k * ${BN}u + lid.x + c * ${TX}u]; }
      for (var r = 0u; r < ${RM}u; r++) {
        for (var c = 0u; c < ${RN}u; c++) { acc[r * ${RN}u + c] = fma(a[r], b[c], acc[r * ${RN}u + c]); }
      }
    }
    workgroupBarrier();
  }
  for (var r = 0u; r < ${RM}u; r++) {
    let gm = row0 + lid.y + r * ${TY}u;
    if (gm >= d.M) { continue; }
    for (var c = 0u; c < ${RN}u; c++) {
      let gn = col0 + lid.x + c * ${TX}u;
      if (gn < d.N) { C[gm * d.N + gn] = acc[r * ${RN}u + c]; }
    }
  }
}`;
}

async function openDevice() {
  let gpu = globalThis.navigator?.gpu;
  if (!gpu) {
    let mod;
    try {
      mod = await import('webgpu');
    } catch (e) {
      throw new Error(`webgpu-gemm: no navigator.gpu and the 'webgpu' package is not installed (npm install --no-save webgpu): ${e.message}`);
    }
    Object.assign(globalThis, mod.globals);
    gpu = mod.create([]);
  }
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new Error('webgpu-gemm: requestAdapter() gave no adapter (on a machine without a GPU set VK_ICD_FILENAMES to SwiftShader\'s ICD file)');
  const L = adapter.limits;
  const requiredLimits = {
    maxStorageBufferBindingSize: L.maxStorageBufferBindingSize,
    maxBufferSize: L.maxBufferSize,
  };
  const device = await adapter.requestDevice({ requiredLimits });
  device.addEventListener?.('uncapturederror', (e) => {
    console.error(`webgpu-gemm: uncaptured WebGPU error: ${e.error?.message ?? e}`);
    process.exitCode = 1;
  });
  const info = adapter.info ?? {};
  // The GPU and the adapter stay referenced for as long as the device runs: Dawn's Node bindings
  // settle the device's promises through its instance, and a collected instance crashes them.
  return {
    gpu, gpuAdapter: adapter, device,
    adapter: {
      vendor: info.vendor, architecture: info.architecture, device: info.device, description: info.description,
      features: [...adapter.features].sort(),
      limits: Object.fromEntries(['maxBufferSize', 'maxStorageBufferBindingSize', 'maxComputeWorkgroupStorageSize',
        'maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupsPerDimension', 'maxStorageBuffersPerShaderStage'].map((k) => [k, L[k]])),
    },
  };
}

const STORAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;

function rand(n, seed) {
  const a = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = (s / 2 ** 32) * 2 - 1;
  }
  return a;
}

class Gemm {
  constructor(device, variant, pipeline) {
    Object.assign(this, { device, variant, pipeline });
  }

  static async build(device, variant) {
    const t0 = performance.now();
    const module = device.createShaderModule({ code: gemmWgsl(variant) });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === 'error');
    if (errors.length) throw new Error(`webgpu-gemm: ${variant.name}: ${errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; ')}`);
    const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const g = new Gemm(device, variant, pipeline);
    g.buildMs = performance.now() - t0;
    return g;
  }

  /** Buffers and one bind group for C[M, N] = A[M, K] B[K, N]. */
  bind(M, N, K, a, b) {
    const d = this.device;
    const buf = (bytes, usage) => d.createBuffer({ size: Math.max(16, bytes), usage });
    const A = buf(M * K * 4, STORAGE()), B = buf(K * N * 4, STORAGE()), C = buf(M * N * 4, STORAGE());
    const U = buf(16, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
    d.queue.writeBuffer(A, 0, a ?? rand(M * K, 1));
    d.queue.writeBuffer(B, 0, b ?? rand(K * N, 2));
    d.queue.writeBuffer(U, 0, new Uint32Array([M, N, K, 0]));
    const group = d.createBindGroup({
      layout: this.pipeline.getBindGroupLayout(0),
      entries: [A, B, C, U].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const grid = [Math.ceil(N / this.variant.BN), Math.ceil(M / this.variant.BM)];
    return { A, B, C, U, group, grid, M, N, K, destroy: () => [A, B, C, U].forEach((x) => x.destroy()) };
  }

  encode(enc, bound, reps) {
    const pass = enc.beginComputePass();
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, bound.group);
    for (let r = 0; r < reps; r++) pass.dispatchWorkgroups(bound.grid[0], bound.grid[1]);
    pass.end();
  }

  async run(bound, reps) {
    const enc = this.device.createCommandEncoder();
    this.encode(enc, bound, reps);
    const t0 = performance.now();
    this.device.queue.submit([enc.finish()]);
    await this.device.queue.onSubmittedWorkDone();
    return performance.now() - t0;
  }
}

async function readBack(device, src, bytes) {
  const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(src, 0, staging, 0, bytes);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(staging.getMappedRange().slice(0));
  staging.unmap();
  staging.destroy();
  return out;
}

/** Largest error of C against a float64 product, over sum |a||b| per element (1 = all bits lost). */
async function check(g, M, N, K) {
  const a = rand(M * K, 11), b = rand(K * N, 12);
  const bound = g.bind(M, N, K, a, b);
  await g.run(bound, 1);
  const c = await readBack(g.device, bound.C, M * N * 4);
  bound.destroy();
  let worst = 0;
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0, mag = 0;
      for (let k = 0; k < K; k++) {
        s += a[i * K + k] * b[k * N + j];
        mag += Math.abs(a[i * K + k] * b[k * N + j]);
      }
      worst = Math.max(worst, Math.abs(c[i * N + j] - s) / (mag || 1));
    }
  }
  return worst;
}

async function gflops(g, n) {
  const bound = g.bind(n, n, n);
  await g.run(bound, 1);
  const once = await g.run(bound, 1);
  const reps = Math.max(1, Math.min(200, Math.ceil(250 / Math.max(once, 0.05))));
  const ms = await g.run(bound, reps);
  bound.destroy();
  return { n, reps, msPerGemm: ms / reps, gflops: (2 * n ** 3 * reps) / (ms * 1e6) };
}

// Dawn's Node bindings settle their promises from a poll that does not hold Node's event loop
// open: with nothing else pending, Node would exit in the middle of an await (and Dawn's threads
// crash at exit). A timer holds it open until the end.
const keepAlive = setInterval(() => {}, 1000);
const { gpu, gpuAdapter, device, adapter } = await openDevice();
console.log(`adapter: ${JSON.stringify(adapter)}`);
const result = { adapter, variants: [] };

for (const v of VARIANTS) {
  const g = await Gemm.build(device, v);
  // A tile's edge inside the shape on every side, and K not a multiple of the slice.
  const err = Math.max(await check(g, 67, 45, 93), await check(g, v.BM + 3, v.BN * 2 - 5, v.TK * 3 + 1));
  const ok = err <= 1e-5;
  const rows = [];
  for (const n of SIZES) rows.push(await gflops(g, n));
  result.variants.push({ ...v, buildMs: g.buildMs, maxRelErr: err, ok, rows });
  console.log(`${v.name}: pipeline ${g.buildMs.toFixed(1)} ms; check ${ok ? 'ok' : 'FAILED'} (max error ${err.toExponential(2)} of sum |a b|)`);
  for (const r of rows) console.log(`  n=${String(r.n).padStart(5)}  ${r.msPerGemm.toFixed(3).padStart(9)} ms  ${(r.gflops < 10 ? r.gflops.toFixed(2) : r.gflops.toFixed(0)).padStart(6)} GFLOP/s  (${r.reps} in one submit)`);
  if (!ok) process.exitCode = 1;
}

// CPU cost of one dispatch with a prebuilt bind group, and a 4-byte readback.
{
  const g = await Gemm.build(device, VARIANTS[0]);
  const bound = g.bind(32, 32, 32);
  const enc = device.createCommandEncoder();
  const t0 = performance.now();
  g.encode(enc, bound, 10000);
  const cb = enc.finish();
  result.encodeUsPerDispatch = ((performance.now() - t0) * 1000) / 10000;
  device.queue.submit([cb]);
  await device.queue.onSubmittedWorkDone();
  const lat = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    await readBack(device, bound.C, 4);
    lat.push(performance.now() - t);
  }
  lat.sort((x, y) => x - y);
  result.readback4BytesMs = lat[lat.length >> 1];
  bound.destroy();
  console.log(`encode: ${result.encodeUsPerDispatch.toFixed(2)} us per dispatch (prebuilt bind group); 4-byte readback: ${result.readback4BytesMs.toFixed(3)} ms (median of 20)`);
}

if (opt('--json')) writeFileSync(opt('--json'), JSON.stringify(result, null, 1));
device.destroy();
clearInterval(keepAlive);
void [gpu, gpuAdapter];
