#!/usr/bin/env python3
"""PyTorch CUDA's figures on the GPU at hand: the anchor a WebGPU backend is measured against on
the same GPU. Not part of the test suite; needs a CUDA build of PyTorch and torchvision.

  python3 tests/bench/torch_cuda.py [--sizes 1024,2048,4096,8192] [--steps 20] [--json FILE]

Prints and (with --json) writes:
  - fp32 GEMM GFLOP/s at n x n x n, TF32 off (the arithmetic a WGSL f32 kernel does) and on;
  - resnet18 (torchvision, 1000 classes) one training step at batch 32, 224x224: zero_grad,
    forward, cross-entropy, backward, SGD step, loss read back; ms per step (median), fp32 strict
    (TF32 off in matmul and cuDNN) and PyTorch's defaults;
  - the SmolLM2-135M-shaped decoder of make_smollm.py with rank-8 LoRA adapters on every attention
    and MLP projection (alpha 16, the base frozen), AdamW on the adapters, batch 8 x seq 256: ms
    per step, the same two precisions.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_smollm import Decoder  # noqa: E402


def precision(strict):
    torch.backends.cuda.matmul.allow_tf32 = not strict
    torch.backends.cudnn.allow_tf32 = not strict


def timed(fn, steps, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ms.append((time.perf_counter() - t0) * 1e3)
    return {"median": statistics.median(ms), "min": min(ms), "n": steps}


def train_step(model, opt, x, y):
    """One step as the wasm benchmark's: zero_grad, forward, cross-entropy, backward, optimizer
    step, the loss read back."""
    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def gemm_rows(sizes):
    rows = []
    for strict in (True, False):
        precision(strict)
        for n in sizes:
            a = torch.randn(n, n, device="cuda")
            b = torch.randn(n, n, device="cuda")
            reps = max(1, int(2e12 / (2 * n**3)))  # ~2 TFLOP per timing
            reps = min(reps, 500)
            t = timed(lambda: [torch.mm(a, b) for _ in range(reps)], 3, 1)
            rows.append({"n": n, "tf32": not strict, "ms": t["median"] / reps,
                         "gflops": 2 * n**3 * reps / (t["median"] * 1e6)})
    return rows


def resnet18_step(steps):
    import torchvision
    out = {}
    for strict in (True, False):
        precision(strict)
        torch.manual_seed(0)
        model = torchvision.models.resnet18(num_classes=1000).cuda().train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x = torch.randn(32, 3, 224, 224, device="cuda")
        y = torch.randint(0, 1000, (32,), device="cuda")

        out["fp32" if strict else "default"] = timed(train_step(model, opt, x, y), steps)
    return out


class LoRALinear(nn.Module):
    def __init__(self, base, rank=8, alpha=16):
        super().__init__()
        self.base = base
        self.base.weight.requires_grad_(False)
        self.a = nn.Parameter(torch.randn(rank, base.in_features) / rank)
        self.b = nn.Parameter(torch.zeros(base.out_features, rank))
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + F.linear(F.linear(x, self.a), self.b) * self.scale


class CudaDecoder(Decoder):
    """make_smollm.Decoder with its causal mask made on the model's device."""

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        s = input_ids.shape[1]
        mask = torch.triu(torch.full((s, s), -1e9, device=input_ids.device), 1)
        for layer in self.layers:
            x = layer(x, self.rope_cos, self.rope_sin, mask)
        return F.linear(self.norm(x), self.embed_tokens.weight).transpose(1, 2)


def lora_step(steps, batch=8, seq=256):
    out = {}
    for strict in (True, False):
        precision(strict)
        torch.manual_seed(0)
        model = CudaDecoder(49152, 576, 9, 3, 1536, 30, 2048)
        for p in model.parameters():
            p.requires_grad_(False)
        for layer in model.layers:
            for name in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"):
                setattr(layer, name, LoRALinear(getattr(layer, name)))
        model = model.cuda().train()
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.0)
        ids = torch.randint(0, 49152, (batch, seq), device="cuda")
        labels = torch.randint(0, 49152, (batch, seq), device="cuda")

        out["fp32" if strict else "default"] = timed(train_step(model, opt, ids, labels), steps)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1024,2048,4096,8192")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_cuda.py: PyTorch sees no CUDA device")
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    print(f"device: {res['device']}, torch {res['torch']}", flush=True)
    res["gemm"] = gemm_rows([int(n) for n in args.sizes.split(",")])
    for r in res["gemm"]:
        print(f"  GEMM n={r['n']:5d} {'tf32' if r['tf32'] else 'fp32'}: {r['gflops']:9.0f} GFLOP/s", flush=True)
    res["resnet18_b32_224"] = resnet18_step(args.steps)
    print(f"  resnet18 batch 32 224x224 step: {json.dumps(res['resnet18_b32_224'])}", flush=True)
    res["smollm_lora_b8_s256"] = lora_step(args.steps)
    print(f"  SmolLM2-135M-shaped LoRA r8 batch 8 seq 256 step: {json.dumps(res['smollm_lora_b8_s256'])}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
