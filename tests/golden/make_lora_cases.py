#!/usr/bin/env python3
"""LoRA golden cases (tests/golden/FORMAT.md plus case.json's "lora" field) from PyTorch 1.13
(Debian python3-torch) with a hand-written LoRA: for each targeted nn.Linear (weight W
[out, in]), y = x W^T (+ b) + (x A^T B^T) * alpha / rank, A [rank, in], B [out, rank]. The
base model is exported (training mode, no constant folding, dynamic batch); webtrain inserts the
adapters itself, and the runner sets their initial values from initial_params.

  /usr/bin/python3 tests/golden/make_lora_cases.py     # writes tests/golden/cases/lora_*

Cases:
  lora_tiny_llama_adamw      a Llama-style decoder: RMSNorm, rotary position embeddings,
                             grouped-query causal attention (2 heads, 1 KV head), SiLU-gated MLP,
                             tied input/output embeddings; LoRA on q/k/v/o and the MLP
                             projections; next-token CrossEntropyLoss over [batch, vocab, seq].
  lora_bert_classifier_adamw a BERT-style encoder (learned positions, post-LayerNorm, erf GELU)
                             with a classification head on token 0; LoRA on query and value, the
                             head (Gemm) trained beside the adapters.
"""
import json
import math
import os
import shutil

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
STEPS = 4
BATCH = 3
OPT = dict(type="AdamW", adam_mode=0, lr=5e-3, betas=[0.9, 0.999], eps=1e-8, weight_decay=0.01,
           bias_correction=True,
           semantics="adam_mode 0 = torch.optim.AdamW (amsgrad=False), per trainable tensor (the "
                     "adapters and requires_grad), t = 1-based step count: p <- p*(1 - lr*weight_decay); "
                     "m <- b1*m + (1-b1)*g; v <- b2*v + (1-b2)*g^2; p <- p - (lr/(1-b1^t)) * m / "
                     "(sqrt(v)/sqrt(1-b2^t) + eps).")
TOL = {"loss": {"rtol": 1e-5, "atol": 1e-6}, "grads": {"rtol": 1e-4, "atol": 1e-5},
       "params": {"rtol": 1e-4, "atol": 1e-5}, "buffers": {"rtol": 1e-4, "atol": 1e-5},
       "outputs": {"rtol": 1e-4, "atol": 1e-5},
       "note": "allclose-style: |actual - expected| <= atol + rtol*|expected|, elementwise."}


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d) + 0.1 * torch.randn(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, kv_heads, mlp, seq):
        super().__init__()
        self.h, self.kvh, self.hd = heads, kv_heads, d // heads
        self.input_layernorm = RMSNorm(d)
        self.q_proj = nn.Linear(d, heads * self.hd, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(heads * self.hd, d, bias=False)
        self.post_attention_layernorm = RMSNorm(d)
        self.gate_proj = nn.Linear(d, mlp, bias=False)
        self.up_proj = nn.Linear(d, mlp, bias=False)
        self.down_proj = nn.Linear(mlp, d, bias=False)
        self.register_buffer("causal_mask", torch.triu(torch.full((seq, seq), -1e9), 1))

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, s, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(h).view(b, s, self.kvh, self.hd).transpose(1, 2)
        v = self.v_proj(h).view(b, s, self.kvh, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.h // self.kvh
        # grouped-query: each KV head serves `rep` query heads (repeat_interleave exports a Loop)
        k = k[:, :, None].expand(b, self.kvh, rep, s, self.hd).reshape(b, self.h, s, self.hd)
        v = v[:, :, None].expand(b, self.kvh, rep, s, self.hd).reshape(b, self.h, s, self.hd)
        att = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.hd)) + self.causal_mask
        o = torch.matmul(torch.softmax(att, dim=-1), v).transpose(1, 2).reshape(b, s, self.h * self.hd)
        x = x + self.o_proj(o)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class TinyLlama(nn.Module):
    def __init__(self, vocab=32, d=16, heads=2, kv_heads=1, mlp=24, seq=6, layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        nn.init.normal_(self.embed_tokens.weight, std=0.3)
        self.layers = nn.ModuleList([LlamaBlock(d, heads, kv_heads, mlp, seq) for _ in range(layers)])
        self.norm = RMSNorm(d)
        hd = d // heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat((ang, ang), dim=-1)
        self.register_buffer("rope_cos", emb.cos()[None, None])
        self.register_buffer("rope_sin", emb.sin()[None, None])

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x, self.rope_cos, self.rope_sin)
        logits = F.linear(self.norm(x), self.embed_tokens.weight)  # tied output embedding
        return logits.transpose(1, 2)  # [batch, vocab, seq]: CrossEntropyLoss's class dimension 1


class BertClassifier(nn.Module):
    def __init__(self, vocab=40, d=16, heads=2, ff=32, seq=7, classes=3):
        super().__init__()
        self.h, self.hd = heads, d // heads
        self.word_embeddings = nn.Embedding(vocab, d)
        self.position_embeddings = nn.Embedding(seq, d)
        self.emb_ln = nn.LayerNorm(d)
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d, bias=False)
        self.value = nn.Linear(d, d)
        self.attn_out = nn.Linear(d, d)
        self.attn_ln = nn.LayerNorm(d)
        self.intermediate = nn.Linear(d, ff)
        self.output = nn.Linear(ff, d)
        self.out_ln = nn.LayerNorm(d)
        self.classifier = nn.Linear(d, classes)
        self.register_buffer("position_ids", torch.arange(seq)[None])

    def forward(self, input_ids):
        b, s = input_ids.shape
        x = self.emb_ln(self.word_embeddings(input_ids) + self.position_embeddings(self.position_ids))
        q = self.query(x).view(b, s, self.h, self.hd).transpose(1, 2)
        k = self.key(x).view(b, s, self.h, self.hd).transpose(1, 2)
        v = self.value(x).view(b, s, self.h, self.hd).transpose(1, 2)
        att = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.hd)), dim=-1)
        a = torch.matmul(att, v).transpose(1, 2).reshape(b, s, self.h * self.hd)
        x = self.attn_ln(x + self.attn_out(a))
        x = self.out_ln(x + self.output(F.gelu(self.intermediate(x))))
        return self.classifier(x[:, 0])


class LoRA:
    """Hand-written LoRA on the nn.Linear modules whose weight name contains a target."""

    def __init__(self, model, rank, alpha, targets):
        self.scale = alpha / rank
        self.adapters = {}  # weight name -> (A, B)
        for mname, mod in model.named_modules():
            if isinstance(mod, nn.Linear) and any(t in f"{mname}.weight" for t in targets):
                out_f, in_f = mod.weight.shape
                a = torch.empty(rank, in_f)
                nn.init.kaiming_uniform_(a, a=math.sqrt(5))
                b = 0.1 * torch.randn(out_f, rank)  # non-zero so that A's step-0 gradient is too
                A, B = nn.Parameter(a), nn.Parameter(b)
                self.adapters[f"{mname}.weight"] = (A, B)
                mod.forward = self._forward(mod, A, B)

    def _forward(self, mod, A, B):
        def forward(x):
            return F.linear(x, mod.weight, mod.bias) + torch.matmul(torch.matmul(x, A.t()), B.t()) * self.scale
        return forward


def ref(case_dir, name, t, dtype):
    t = t.detach().contiguous()
    arr = t.to({"float32": torch.float32, "int32": torch.int32, "int64": torch.int64}[dtype])
    with open(os.path.join(case_dir, name), "wb") as f:
        f.write(arr.numpy().tobytes())
    return {"file": name, "dtype": dtype, "shape": list(t.shape)}


def make_case(name, description, model, rank, alpha, targets, requires_grad, seq, vocab, labels_fn, notes):
    case_dir = os.path.join(ROOT, name)
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(case_dir)
    model.train()
    ids0 = torch.randint(0, vocab, (BATCH, seq))
    torch.onnx.export(model, (ids0,), os.path.join(case_dir, "model.onnx"), input_names=["input_ids"],
                      output_names=["logits"], opset_version=17, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING,
                      dynamic_axes={"input_ids": {0: "batch"}, "logits": {0: "batch"}})
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    lora = LoRA(model, rank, alpha, targets)
    base_names = list(state.keys())
    trained = {n: p for n, p in model.named_parameters() if n in requires_grad}
    for w, (A, B) in lora.adapters.items():
        trained[f"{w}.lora_A"] = A
        trained[f"{w}.lora_B"] = B
    for n, p in model.named_parameters():
        p.requires_grad_(n in requires_grad)
    names = list(trained.keys())
    opt = torch.optim.AdamW([trained[n] for n in names], lr=OPT["lr"], betas=tuple(OPT["betas"]),
                            eps=OPT["eps"], weight_decay=OPT["weight_decay"])
    initial = {n: ref(case_dir, f"init__{n}.bin", v, "float32") for n, v in state.items() if v.is_floating_point()}
    for n in names:
        if n.endswith((".lora_A", ".lora_B")):
            initial[n] = ref(case_dir, f"init__{n}.bin", trained[n], "float32")
    steps = []
    for k in range(STEPS):
        ids = torch.randint(0, vocab, (BATCH, seq))
        labels = labels_fn(ids)
        opt.zero_grad()
        loss = F.cross_entropy(model(ids), labels.long())
        loss.backward()
        grads = {n: ref(case_dir, f"step{k}__grad__{n}.bin", trained[n].grad, "float32") for n in names}
        opt.step()
        params = {n: ref(case_dir, f"step{k}__param__{n}.bin", trained[n], "float32") for n in names}
        steps.append({"index": k, "lr": OPT["lr"],
                      "inputs": {"input_ids": ref(case_dir, f"step{k}__input_ids.bin", ids, "int64"),
                                 "labels": ref(case_dir, f"step{k}__labels.bin", labels, "int32")},
                      "loss": loss.item(), "grads": grads, "params_after": params})
    model.eval()
    with torch.no_grad():
        ids = torch.randint(0, vocab, (BATCH, seq))
        labels = labels_fn(ids)
        logits = model(ids)
        eval_loss = F.cross_entropy(logits, labels.long()).item()
    eval_in = {"input_ids": ref(case_dir, "eval__input_ids.bin", ids, "int64"),
               "labels": ref(case_dir, "eval__labels.bin", labels, "int32")}
    frozen = [n for n in base_names if state[n].is_floating_point() and n not in requires_grad]
    case = {
        "name": name, "set": "lora", "description": description, "opset": 17,
        "torch_version": torch.__version__, "model": "model.onnx",
        "input_names": ["input_ids"], "output_names": ["logits"], "target_names": ["labels"],
        "training_graph_input_names": ["input_ids", "labels"], "batch_size": BATCH,
        "initializer_names": base_names,
        "lora": {"rank": rank, "alpha": alpha, "targets": targets,
                 "adapters": sorted(lora.adapters.keys()),
                 "semantics": "for each adapted weight W [out, in] (an nn.Linear's): y = x W^T (+ b) + "
                              "(x A^T B^T) * alpha / rank with A = <W>.lora_A [rank, in], B = <W>.lora_B "
                              "[out, rank], both trained (initial values in initial_params); W frozen."},
        "requires_grad": requires_grad, "frozen_params": frozen, "buffers": [],
        "loss": "CrossEntropyLoss", "loss_reduction": "mean", "optimizer": OPT, "lr_schedule": None,
        "num_steps": STEPS, "initial_params": initial, "steps": steps,
        "eval": {"semantics": "eval model after the last step (no Dropout or BatchNorm here: the "
                              "exported graph's function with the adapters)", "inputs": eval_in, "loss": eval_loss},
        "inference": {"semantics": "eval-model outputs (no loss) on the eval batch after the last step",
                      "inputs": {"input_ids": eval_in["input_ids"]},
                      "outputs": {"logits": ref(case_dir, "inference__logits.bin", logits, "float32")}},
        "tolerance": TOL, "notes": notes,
    }
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
    print(f"{name}: loss {steps[0]['loss']:.5f} -> {steps[-1]['loss']:.5f}, eval {eval_loss:.5f}, "
          f"{len(lora.adapters)} adapted weights")


def main():
    torch.manual_seed(18)
    seq = 6
    make_case("lora_tiny_llama_adamw",
              "Llama-style decoder, 2 layers, hidden 16, 2 heads / 1 KV head (grouped-query, causal), "
              "RMSNorm, rotary position embeddings, SiLU-gated MLP 24, tied embeddings (vocab 32); "
              "LoRA rank 4, alpha 8 on every attention and MLP projection; next-token targets.",
              TinyLlama(seq=seq), 4, 8.0,
              ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"], [], seq, 32,
              lambda ids: torch.roll(ids, -1, dims=1).to(torch.int32),
              ["The logits are transposed to [batch, vocab, seq] so that CrossEntropyLoss's class "
               "dimension is 1; labels [batch, seq] are the inputs shifted by one (wrapping).",
               "The projections have no bias; q/k/v/o/gate/up/down reach MatMul through a Transpose "
               "of the [out, in] weight. lora_B starts non-zero (0.1 * randn) so that every adapter "
               "has a non-zero gradient at step 0. Only the adapters are trained (requires_grad is empty)."])
    torch.manual_seed(19)
    make_case("lora_bert_classifier_adamw",
              "BERT-style encoder: learned positions, post-LayerNorm, 2 heads, erf GELU FFN 32, "
              "classification head on token 0 (3 classes); LoRA rank 2, alpha 4 on query and value; "
              "the head trained beside the adapters.",
              BertClassifier(), 2, 4.0, ["query", "value"], ["classifier.weight", "classifier.bias"], 7, 40,
              lambda ids: (ids[:, 1] % 3).to(torch.int32),
              ["query and value have biases (frozen, not adapted); the classifier is a Gemm (transB) "
               "trained beside the adapters. lora_B starts non-zero (0.1 * randn)."])


if __name__ == "__main__":
    main()
