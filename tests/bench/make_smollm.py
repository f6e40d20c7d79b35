#!/usr/bin/env python3
"""A decoder with SmolLM2-135M's shape and random weights, for tests/bench/smollm-lora.mjs (issue
18's benchmark rows). Run: /usr/bin/python3 tests/bench/make_smollm.py OUT.onnx [--layers N]
[--hidden D] [--heads H] [--kv-heads K] [--mlp M] [--vocab V] [--max-seq S] [--float16] [--inline]

Default: 30 layers, hidden 576, 9 heads / 3 KV heads (head dim 64), MLP 1536, vocabulary 49152,
tied input/output embeddings (134.5M parameters, 538 MB of float32): the Llama-style model of
tests/golden/make_lora_cases.py (RMSNorm, rotary position embeddings, grouped-query causal
attention, SiLU-gated MLP), exported by torch.onnx (PyTorch 1.13, opset 17) in training mode
without constant folding, with dynamic axes input_ids [batch, seq] -> logits [batch, vocab, seq]
(the rotary tables are sliced to seq, up to --max-seq, default 2048; the causal mask is made
for seq by Trilu).
Initializers of 1 KiB or more are written to OUT.onnx.data (onnx's save_as_external_data);
--inline keeps them in OUT (tests/data/tiny-decoder.onnx: --layers 2 --hidden 16 --heads 2
--kv-heads 1 --mlp 24 --vocab 32 --max-seq 64 --inline).

--float16: the weights every Linear and the embedding read become float16 initializers read
through Cast(to=FLOAT) (the norms' weights stay float32), as a half-precision export is.
"""
import argparse
import inspect
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
from make_lora_cases import LlamaBlock, RMSNorm  # noqa: E402


class Block(LlamaBlock):
    """LlamaBlock for any seq up to max_seq: the decoder gives it the causal mask made for this
    seq (no [max_seq, max_seq] buffer per layer) and the rotary tables sliced to it."""

    def __init__(self, d, heads, kv_heads, mlp):
        super().__init__(d, heads, kv_heads, mlp, 1)
        del self.causal_mask  # set by Decoder.forward

    def forward(self, x, cos, sin, mask):
        s = x.shape[1]
        self.causal_mask = mask
        return super().forward(x, cos[:, :, :s], sin[:, :, :s])


class Decoder(nn.Module):
    def __init__(self, vocab, d, heads, kv_heads, mlp, layers, max_seq):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        nn.init.normal_(self.embed_tokens.weight, std=0.02)
        self.layers = nn.ModuleList([Block(d, heads, kv_heads, mlp) for _ in range(layers)])
        for layer in self.layers:  # the initialization of a trained model's scale: activations stay finite
            for lin in (layer.q_proj, layer.k_proj, layer.v_proj, layer.o_proj, layer.gate_proj,
                        layer.up_proj, layer.down_proj):
                nn.init.normal_(lin.weight, std=0.02)
        self.norm = RMSNorm(d)
        hd = d // heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(max_seq).float(), inv)
        emb = torch.cat((ang, ang), dim=-1)
        self.register_buffer("rope_cos", emb.cos()[None, None])
        self.register_buffer("rope_sin", emb.sin()[None, None])

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        s = input_ids.shape[1]
        mask = torch.triu(torch.full((s, s), -1e9), 1)  # Trilu over ConstantOfShape: no buffer
        for layer in self.layers:
            x = layer(x, self.rope_cos, self.rope_sin, mask)
        logits = F.linear(self.norm(x), self.embed_tokens.weight)  # tied output embedding
        return logits.transpose(1, 2)  # [batch, vocab, seq]: CrossEntropyLoss's class dimension 1


def to_float16(model_proto):
    """Every float initializer read only by MatMul/Gemm/Gather, or through a Transpose into one,
    becomes float16 behind a Cast(to=FLOAT) (what a half-precision export gives)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    g = model_proto.graph
    readers = {}
    for n in g.node:
        for i, name in enumerate(n.input):
            readers.setdefault(name, []).append((n, i))
    casts = []
    for init in g.initializer:
        if init.data_type != TensorProto.FLOAT or len(init.dims) != 2:
            continue
        uses = readers.get(init.name, [])
        if not uses or not all(n.op_type in ("MatMul", "Gemm", "Gather", "Transpose") for n, _ in uses):
            continue
        arr = numpy_helper.to_array(init).astype(np.float16)
        init.CopyFrom(numpy_helper.from_array(arr, init.name))
        wide = init.name + "_f32"
        casts.append(helper.make_node("Cast", [init.name], [wide], to=TensorProto.FLOAT,
                                      name=init.name + "_cast"))
        for n, i in uses:
            n.input[i] = wide
    nodes = casts + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(model_proto)
    return model_proto


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=30)
    ap.add_argument("--hidden", type=int, default=576)
    ap.add_argument("--heads", type=int, default=9)
    ap.add_argument("--kv-heads", type=int, default=3)
    ap.add_argument("--mlp", type=int, default=1536)
    ap.add_argument("--vocab", type=int, default=49152)
    ap.add_argument("--max-seq", type=int, default=2048)
    ap.add_argument("--float16", action="store_true")
    ap.add_argument("--inline", action="store_true")
    a = ap.parse_args()
    import onnx
    torch.manual_seed(135)
    model = Decoder(a.vocab, a.hidden, a.heads, a.kv_heads, a.mlp, a.layers, a.max_seq)
    model.train()
    params = sum(p.numel() for p in model.parameters())
    tmp = a.out + ".tmp.onnx"
    # PyTorch >= 2.9 exports through dynamo unless told otherwise; training mode and dynamic_axes
    # are the TorchScript exporter's
    legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(model, (torch.randint(0, a.vocab, (1, 8)),), tmp, input_names=["input_ids"],
                      output_names=["logits"], opset_version=17, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING,
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 2: "seq"}},
                      **legacy)
    proto = onnx.load(tmp)
    os.remove(tmp)
    if a.float16:
        proto = to_float16(proto)
    data = os.path.basename(a.out) + ".data"
    if os.path.exists(a.out + ".data"):
        os.remove(a.out + ".data")
    if a.inline:
        onnx.save_model(proto, a.out)
    else:
        onnx.save_model(proto, a.out, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=data, size_threshold=1024)
    where = f"{os.path.getsize(a.out)} bytes" if a.inline else f"{os.path.getsize(a.out + '.data')} bytes in {data}"
    print(f"{a.out}: {a.layers} layers, hidden {a.hidden}, {a.heads}/{a.kv_heads} heads, mlp {a.mlp}, "
          f"vocab {a.vocab}: {params} parameters, {where}{' (float16 matrices)' if a.float16 else ''}")


if __name__ == "__main__":
    main()
