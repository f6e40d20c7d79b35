// The benchmark's models: forward model, batch, inputs, loss, optimizer, trainable
// parameters. Forward models of our own come from tests/bench/make_models.py (build/bench-models/).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// WT_BENCH_MODELS_DIR (absolute, ending in '/'): another folder, e.g. the Chromium smoke test's own.
export const MODELS_DIR = process.env.WT_BENCH_MODELS_DIR ?? `${ROOT}build/bench-models/`;
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
    { key: 'frozen_base_1024x8', label: 'frozen base 8x1024 + head b64', forward: `${MODELS_DIR}frozen_base_1024x8.onnx`, batch: 64, inputs: [{ name: 'input', dims: [64, 1024], kind: 'float' }], classes: 10, requiresGrad: meta.params.frozen_base_1024x8, frozenParams: meta.frozen.frozen_base_1024x8, optimizer: ADAMW, lr: 1e-3 },
    { key: 'transformer_d256', label: 'transformer d256 s128 h4 b8', forward: `${MODELS_DIR}transformer_d256.onnx`, batch: 8, inputs: [{ name: 'input', dims: [8, 128, 256], kind: 'float' }], classes: 10, requiresGrad: meta.params.transformer_d256, frozenParams: [], optimizer: ADAMW, lr: 1e-3, heavy: true },
  ];
  // torchvision architectures, when torchvision_models.py could export them (Debian's
  // python3-torchvision): batch 2, 64x64, 10 classes; timed against PyTorch on one thread. Their
  // optimizer: SGD (plain, lr 0.01: the step is then the convolutions, not 11-28M parameters'
  // optimizer update) or AdamW (lr 1e-3) with WT_BENCH_TV_OPTIMIZER=adamw (run.mjs --tv-optimizer).
  const tvOpt = process.env.WT_BENCH_TV_OPTIMIZER ?? 'sgd';
  if (tvOpt !== 'sgd' && tvOpt !== 'adamw') throw new Error(`WT_BENCH_TV_OPTIMIZER / --tv-optimizer: expected sgd or adamw, got ${tvOpt}`);
  const tvMeta = `${MODELS_DIR}torchvision.json`;
  const tv = existsSync(tvMeta) ? JSON.parse(readFileSync(tvMeta, 'utf8')) : {};
  for (const [key, m] of Object.entries(tv)) {
    specs.push({ key: `tv_${key}`, label: m.label, forward: `${MODELS_DIR}${m.file}`, batch: m.batch, inputs: [{ name: 'input', dims: m.dims, kind: 'float' }], classes: m.classes, requiresGrad: m.params, frozenParams: m.frozen, optimizer: tvOpt === 'sgd' ? { type: 'SGD' } : ADAMW, lr: tvOpt === 'sgd' ? 0.01 : 1e-3, pytorch: key, heavy: true });
    meta.forward_flops[`tv_${key}`] = m.forward_flops;
    meta.backward_flops[`tv_${key}`] = m.backward_flops;
  }
  for (const s of specs) {
    s.forwardFlops = meta.forward_flops[s.key];
    s.backwardFlops = meta.backward_flops[s.key];
  }
  return specs;
}

export { makeBatches, makeBatch, median } from './data.mjs';
