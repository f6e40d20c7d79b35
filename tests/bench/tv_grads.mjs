// One training step of the benchmark's torchvision architectures against PyTorch's gradients:
// `torchvision_models.py grads KEY` exports the model (every Dropout at p = 0: PyTorch's masks
// are its own draws) with a seeded batch, its loss and every parameter's gradient; here webtrain
// generates the artifacts (every parameter trainable, cross-entropy), runs one train step on
// each backend asked for, and compares the loss and every gradient with PyTorch's.
//
//   node tests/bench/tv_grads.mjs [--backend wasm,webgpu] [KEY...]
//
// KEY: resnet18, mobilenet_v3_small, efficientnet_b0, vit_small, convnext_tiny (default: all).
// Needs Debian's python3-torchvision (and python3-onnx); webgpu in Node the `webgpu` package
// (SwiftShader without a GPU: a minute or more per model). Each gradient is measured against the
// same step in float64 (the exact one): its relative error |g - g64| / |g64| (2-norms over the
// parameter) must be within 4 times PyTorch float32's own (|g32 - g64| / |g64|), plus 1e-6:
// through dozens of layers with BatchNorm, float32 summation orders differ by more than any
// elementwise tolerance would allow, and PyTorch's is one of many. Exits non-zero when a
// gradient does not, printing the worst per model.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { artifacts, CheckpointState, Module, Optimizer, Tensor } from '../../js/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = join(ROOT, 'build/bench-models');
const KEYS = ['resnet18', 'mobilenet_v3_small', 'efficientnet_b0', 'vit_small', 'convnext_tiny'];
const FACTOR = 4, FLOOR = 1e-6;

const args = process.argv.slice(2);
const at = args.indexOf('--backend');
const backends = at >= 0 ? args.splice(at, 2)[1].split(',') : ['wasm', 'webgpu'];
const keys = args.length ? args : KEYS;
for (const k of keys) if (!KEYS.includes(k)) throw new Error(`unknown key ${k}; one of ${KEYS.join(', ')}`);

let gpu;
if (backends.includes('webgpu')) {
  const env = await import('../js/webgpu-env.mjs');
  gpu = env.gpu;
}

const read = (file, Typed) => {
  const b = readFileSync(file);
  return new Typed(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
};

let failed = false;
for (const key of keys) {
  const dir = join(OUT, `tvg_${key}`);
  if (!existsSync(join(dir, 'case.json'))) {
    const r = spawnSync('/usr/bin/python3', [join(ROOT, 'tests/bench/torchvision_models.py'), 'grads', key, OUT], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`torchvision_models.py grads ${key}: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`);
  }
  const c = JSON.parse(readFileSync(join(dir, 'case.json'), 'utf8'));
  const x = new Tensor('float32', read(join(dir, 'input.bin'), Float32Array), c.dims);
  const y = new Tensor('int32', read(join(dir, 'labels.bin'), Int32Array), [c.dims[0]]);
  const art = await artifacts.generateArtifacts(join(OUT, `tvg_${key}.onnx`), { requiresGrad: c.params.map((p) => p.name), loss: 'CrossEntropyLoss', optimizer: 'SGD' });
  for (const backend of backends) {
    const t0 = performance.now();
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    const module = await Module.create(art.trainingModel, state, art.evalModel, { backend, gpu });
    const optimizer = await Optimizer.create(art.optimizerModel, module);
    try {
      const loss = (await module.run(x, y)).data[0];
      let worst = { ratio: 0 };
      const err = (g, r) => {
        let e = 0, n = 0;
        for (let i = 0; i < r.length; i++) {
          e += (g[i] - r[i]) ** 2;
          n += r[i] ** 2;
        }
        return Math.sqrt(e / (n || 1));
      };
      for (const p of c.params) {
        const exact = read(join(dir, p.file64), Float64Array);
        const torch = err(read(join(dir, p.file), Float32Array), exact);
        const ours = err((await state.parameters.get(p.name)).grad, exact);
        const ratio = ours / (FACTOR * torch + FLOOR);
        if (!(ratio <= worst.ratio)) worst = { ratio, name: p.name, ours, torch };
      }
      const ok = worst.ratio <= 1 && Math.abs(loss - c.loss) <= 1e-4 * Math.abs(c.loss);
      failed ||= !ok;
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${key} on ${module.backend}: loss ${loss} (PyTorch ${c.loss}); ${c.params.length} gradients, worst ${worst.name}: relative error ${worst.ours.toExponential(2)}, PyTorch float32's ${worst.torch.toExponential(2)} (${worst.ratio.toFixed(3)} of the bound); ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } finally {
      optimizer.release();
      module.release();
      state.release();
    }
  }
}
process.exit(failed ? 1 : 0);
