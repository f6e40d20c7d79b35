#!/usr/bin/python3
"""The benchmark's torchvision architectures and their PyTorch reference timing.

  /usr/bin/python3 tests/bench/torchvision_models.py export OUT_DIR
      writes OUT_DIR/tv_<key>.onnx (exported in training mode: BatchNormalization with
      training_mode=1, Dropout kept; no constant folding; opset 17; input 'input'
      [2, 3, 64, 64], output 'output' [2, 10]: a fixed batch, as the shapes of ViT's attention
      reshapes are then known) and OUT_DIR/torchvision.json
      {key: {file, label, batch, dims, classes, params, frozen, forward_flops, backward_flops}}.
      Prints 'SKIP <why>' and exits 0 when Debian's python3-torchvision is not installed.
  /usr/bin/python3 tests/bench/torchvision_models.py time KEY SGD|AdamW LR STEPS WARMUP EVALS [WARMUP_MS]
      trains the same model (same seed, same initial weights as the export) with PyTorch on one
      thread (torch.set_num_threads(1)): cross-entropy, plain SGD or AdamW (PyTorch's defaults
      otherwise: AdamW's weight decay 0.01 where webtrain's is 0, the same arithmetic per
      parameter), the same step as the
      benchmark's (zero_grad, forward, loss, backward, optimizer step, loss read back), random
      batches cycled as data.mjs does; prints one 'RESULT {json}' line with train / eval
      {median, min, n} in ms.
  /usr/bin/python3 tests/bench/torchvision_models.py grads KEY OUT_DIR
      one training step's reference for tests/bench/tv_grads.mjs: the model with every Dropout at
      p = 0 (PyTorch's masks are its own draws), exported as above to OUT_DIR/tvg_KEY.onnx, a
      seeded batch, the mean cross-entropy, and every parameter's gradient in float32 and, the
      same step recomputed in float64, the exact one to measure both against: OUT_DIR/tvg_KEY/
      (input.bin, labels.bin, grad_<i>.bin, grad64_<i>.bin (float64),
      case.json {loss, params: [{name, dims, file, file64}]}).

The models, at batch 2 and 64x64 images (the measurement the issue quotes), 10 classes:
  resnet18, mobilenet_v3_small, efficientnet_b0, convnext_tiny (torchvision's definitions,
  num_classes=10; stochastic depth off: it draws a random mask per sample, which is not part of
  the benchmark) and vit_small: torchvision's VisionTransformer class with small dims (patch 8,
  4 layers, 4 heads, hidden 192, MLP 768; vit_b_16 is 86M parameters, far from a training-in-a-tab
  size).
"""
import copy
import io
import json
import os
import sys
import time

BATCH = 2
SIZE = 64
CLASSES = 10
SEED = 20261125
NBATCHES = 8


def builders():
    import torchvision.models as tv
    from torchvision.models.vision_transformer import VisionTransformer
    return {
        'resnet18': ('resnet18', lambda: tv.resnet18(num_classes=CLASSES)),
        'mobilenet_v3_small': ('mobilenet_v3_small', lambda: tv.mobilenet_v3_small(num_classes=CLASSES)),
        'efficientnet_b0': ('efficientnet_b0', lambda: tv.efficientnet_b0(num_classes=CLASSES, stochastic_depth_prob=0.0)),
        'vit_small': ('ViT p8 d192 L4 h4', lambda: VisionTransformer(image_size=SIZE, patch_size=8, num_layers=4, num_heads=4,
                                                                    hidden_dim=192, mlp_dim=768, num_classes=CLASSES)),
        'convnext_tiny': ('convnext_tiny', lambda: tv.convnext_tiny(num_classes=CLASSES, stochastic_depth_prob=0.0)),
    }


def make(key):
    import torch
    torch.manual_seed(SEED)
    label, build = builders()[key]
    return label, build().train()


def export(out):
    try:
        import torch
        import torchvision  # noqa: F401
    except ImportError as e:
        print(f'SKIP no torchvision ({e}): apt-get install python3-torchvision')
        return
    import onnx
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from make_models import forward_flops
    os.makedirs(out, exist_ok=True)
    meta = {}
    for key in builders():
        label, model = make(key)
        path = os.path.join(out, f'tv_{key}.onnx')
        params = [n for n, _ in model.named_parameters()]
        if not os.path.exists(path):
            buf = io.BytesIO()
            torch.onnx.export(model, torch.zeros(BATCH, 3, SIZE, SIZE), buf, training=torch.onnx.TrainingMode.TRAINING,
                              do_constant_folding=False, opset_version=17, input_names=['input'], output_names=['output'])
            m = onnx.load_from_string(buf.getvalue())
            names = {i.name for i in m.graph.initializer}
            missing = [p for p in params if p not in names]
            if missing:
                raise SystemExit(f'{key}: parameters not exported as initializers: {missing[:5]}')
            onnx.save(m, path + '.tmp')
            os.replace(path + '.tmp', path)
        fwd, back = forward_flops(path, BATCH, set(params))
        meta[key] = {'file': f'tv_{key}.onnx', 'label': f'{label} b{BATCH} {SIZE}x{SIZE}', 'batch': BATCH,
                     'dims': [BATCH, 3, SIZE, SIZE], 'classes': CLASSES, 'params': params, 'frozen': [],
                     'forward_flops': fwd, 'backward_flops': back, 'torch': torch.__version__}
    with open(os.path.join(out, 'torchvision.json'), 'w') as f:
        json.dump(meta, f, indent=1)
    print(json.dumps({k: [v['forward_flops'], v['backward_flops']] for k, v in meta.items()}))


def grads(key, out):
    import numpy as np
    import torch
    _, model = make(key)
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    if key == 'vit_small':
        # torchvision starts the ViT's head at zero, which leaves every other gradient zero
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    os.makedirs(os.path.join(out, f'tvg_{key}'), exist_ok=True)
    path = os.path.join(out, f'tvg_{key}.onnx')
    torch.onnx.export(model, torch.zeros(BATCH, 3, SIZE, SIZE), path, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=17, input_names=['input'], output_names=['output'])
    g = torch.Generator().manual_seed(SEED + 1)
    x = torch.rand(BATCH, 3, SIZE, SIZE, generator=g) * 2 - 1
    y = torch.randint(0, CLASSES, (BATCH,), generator=g)
    exact = copy.deepcopy(model).double()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    torch.nn.functional.cross_entropy(exact(x.double()), y).backward()
    d = os.path.join(out, f'tvg_{key}')
    x.numpy().astype(np.float32).tofile(os.path.join(d, 'input.bin'))
    y.numpy().astype(np.int32).tofile(os.path.join(d, 'labels.bin'))
    params = []
    for i, ((name, p), p64) in enumerate(zip(model.named_parameters(), exact.parameters())):
        p.grad.numpy().astype(np.float32).tofile(os.path.join(d, f'grad_{i}.bin'))
        p64.grad.numpy().astype(np.float64).tofile(os.path.join(d, f'grad64_{i}.bin'))
        params.append({'name': name, 'dims': list(p.shape), 'file': f'grad_{i}.bin', 'file64': f'grad64_{i}.bin'})
    with open(os.path.join(d, 'case.json'), 'w') as f:
        json.dump({'key': key, 'loss': loss.item(), 'dims': [BATCH, 3, SIZE, SIZE], 'params': params}, f)
    print(json.dumps({'key': key, 'loss': loss.item(), 'params': len(params)}))


def timed(fn, steps, warmup, warmup_ms):
    t0 = time.perf_counter()
    i = 0
    while i < warmup or (time.perf_counter() - t0) * 1e3 < warmup_ms:
        fn()
        i += 1
    ts, cpu = [], []
    for _ in range(steps):
        c = time.process_time()  # every thread of the process, as Node's process.cpuUsage()
        a = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - a) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)

    def median(v):
        v = sorted(v)
        n = len(v)
        return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    return {'median': median(ts), 'min': min(ts), 'n': len(ts), 'cpuMedian': median(cpu)}


def time_steps(key, optimizer, lr, steps, warmup, evals, warmup_ms):
    import torch
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    _, model = make(key)
    if optimizer not in ('SGD', 'AdamW'):
        raise SystemExit(f'optimizer {optimizer}: expected SGD or AdamW')
    opt = (torch.optim.SGD if optimizer == 'SGD' else torch.optim.AdamW)(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(SEED)
    data = [(torch.rand(BATCH, 3, SIZE, SIZE, generator=g) * 2 - 1, torch.randint(0, CLASSES, (BATCH,), generator=g))
            for _ in range(NBATCHES)]
    k = [0]
    losses = []

    def step():
        x, y = data[k[0] % NBATCHES]
        k[0] += 1
        opt.zero_grad(set_to_none=False)  # webtrain's lazyResetGrad keeps the buffers
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())

    train = timed(step, steps, warmup, warmup_ms)
    model.eval()

    def ev():
        x, y = data[k[0] % NBATCHES]
        k[0] += 1
        with torch.no_grad():
            torch.nn.functional.cross_entropy(model(x), y).item()

    evr = timed(ev, evals, min(5, warmup), warmup_ms / 3)
    nparams = sum(p.numel() for p in model.parameters())
    print('RESULT ' + json.dumps({'train': train, 'eval': evr, 'loss0': losses[0], 'loss': losses[-1], 'params': nparams,
                                  'threadsReported': torch.get_num_threads(),
                                  'note': f'PyTorch {torch.__version__}, torch.set_num_threads(1), {optimizer}'}))


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == 'export':
        export(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == 'grads':
        grads(sys.argv[2], sys.argv[3])
    elif len(sys.argv) in (8, 9) and sys.argv[1] == 'time':
        time_steps(sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]),
                   float(sys.argv[8]) if len(sys.argv) == 9 else 2000.0)
    else:
        raise SystemExit(__doc__)
