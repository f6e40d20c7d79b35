// The benchmark's batches, shared by the Node worker (worker.mjs) and the Chromium page's worker
// (pages/bench-worker.mjs): no Node built-ins here.

/**
 * Deterministic pseudo-random data (LCG) so every runtime sees the same batches. Steps cycle
 * through up to 64 batches (at most ~16 MB of inputs) with random labels: one batch repeated
 * drives the loss to ~0 within a hundred AdamW steps, and the tiny (denormal) gradients that
 * follow slowed onnxruntime-web down by 2-3x here, which is not what training on real data sees.
 */
export function makeBatches(spec, count) {
  const bytes = spec.inputs.reduce((a, i) => a + 4 * i.dims.reduce((x, y) => x * y, 1), 0);
  const n = count ?? Math.max(4, Math.min(64, Math.floor((16 << 20) / bytes)));
  return Array.from({ length: n }, (_, i) => makeBatch(spec, 12345 + 7919 * i));
}

export function makeBatch(spec, seed0 = 12345) {
  let seed = seed0;
  const rnd = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 4294967296;
  };
  const inputs = spec.inputs.map((inp) => {
    const n = inp.dims.reduce((a, b) => a * b, 1);
    if (inp.kind === 'ids') return { ...inp, data: BigInt64Array.from({ length: n }, () => BigInt(Math.floor(rnd() * inp.vocab))) };
    return { ...inp, data: Float32Array.from({ length: n }, () => rnd() * 2 - 1) };
  });
  const labels = Int32Array.from({ length: spec.batch }, () => Math.floor(rnd() * spec.classes));
  return { inputs, labels };
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
