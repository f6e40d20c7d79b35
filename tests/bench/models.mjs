// The benchmark's models (issue 6): forward model, batch, inputs, loss, optimizer, trainable
// parameters. Forward models of our own come from tests/bench/make_models.py (build/bench-models/).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MODELS_DIR = `${ROOT}build/bench-models/`;
export const OUT_DIR = `${ROOT}build/bench/`;
export const ORT_MNIST = `${ROOT}tests/data/ort-mnist/`;
const GOLDEN = `${ROOT}tests/golden/cases/`;

const ADAMW = { type: 'AdamW' };

function golden(name) {
  return JSON.parse(readFileSync(`${GOLDEN}${name}/case.json`, 'utf8'));
}

/** key -> spec. inputs: [{ name, dims, kind: 'float' | 'ids', vocab }]; classes: CE classes. */
export function modelSpecs() {
  const meta = JSON.parse(readFileSync(`${MODELS_DIR}meta.json`, 'utf8'));
  const cnn = golden('cnn_bn_ce_sgd');
  const tt = golden('tiny_transformer_frozen_adamw');
  const specs = [
    { key: 'mlp_784_128_10', label: 'MLP 784-128-10 b64', forward: `${MODELS_DIR}mlp_784_128_10.onnx`, batch: 64, inputs: [{ name: 'input', dims: [64, 784], kind: 'float' }], classes: 10, requiresGrad: meta.params.mlp_784_128_10, frozenParams: [], optimizer: ADAMW, lr: 1e-3, tf: { kind: 'mlp', sizes: [784, 128, 10] } },
    { key: 'mlp_784_256_256_10', label: 'MLP 784-256-256-10 b64', forward: `${MODELS_DIR}mlp_784_256_256_10.onnx`, batch: 64, inputs: [{ name: 'input', dims: [64, 784], kind: 'float' }], classes: 10, requiresGrad: meta.params.mlp_784_256_256_10, frozenParams: [], optimizer: ADAMW, lr: 1e-3, tf: { kind: 'mlp', sizes: [784, 256, 256, 10] } },
    { key: 'mnist_mlp_784_500_10', label: 'MNIST MLP 784-500-10 b64', forward: `${MODELS_DIR}mlp_784_500_10.onnx`, batch: 64, inputs: [{ name: 'input', dims: [64, 784], kind: 'float' }], classes: 10, requiresGrad: meta.params.mnist_mlp_784_500_10, frozenParams: [], optimizer: ADAMW, lr: 1e-3, ortOwn: true, tf: { kind: 'mlp', sizes: [784, 500, 10] } },
    { key: 'cnn_bn', label: 'CNN (conformance) b32', forward: `${GOLDEN}cnn_bn_ce_sgd/model.onnx`, batch: 32, inputs: [{ name: 'input', dims: [32, 1, 28, 28], kind: 'float' }], classes: 10, requiresGrad: cnn.requires_grad, frozenParams: cnn.frozen_params, optimizer: { type: 'SGD' }, lr: 0.05, tf: { kind: 'cnn' } },
    { key: 'tiny_transformer', label: 'tiny transformer b16', forward: `${GOLDEN}tiny_transformer_frozen_adamw/model.onnx`, batch: 16, inputs: [{ name: 'input_ids', dims: [16, 12], kind: 'ids', vocab: 50 }], classes: 4, requiresGrad: tt.requires_grad, frozenParams: tt.frozen_params, optimizer: { type: 'AdamW', weightDecay: 0.01 }, lr: 1e-3 },
    { key: 'transformer_d256', label: 'transformer d256 s128 h4 b8', forward: `${MODELS_DIR}transformer_d256.onnx`, batch: 8, inputs: [{ name: 'input', dims: [8, 128, 256], kind: 'float' }], classes: 10, requiresGrad: meta.params.transformer_d256, frozenParams: [], optimizer: ADAMW, lr: 1e-3, heavy: true },
  ];
  for (const s of specs) {
    s.forwardFlops = meta.forward_flops[s.key];
    s.backwardFlops = meta.backward_flops[s.key];
  }
  return specs;
}

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
