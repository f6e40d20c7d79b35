#!/usr/bin/python3
"""Writes the real-model golden cases to tests/golden/cases-models/<name>/.

Seven small models of the shapes people export, each trained a few steps in PyTorch and recorded
in the golden format of tests/golden/FORMAT.md (model.onnx, case.json, raw .bin tensors and the
forward/ folder in the ONNX backend-test layout):

  resnet_style        residual blocks, BatchNorm (training mode), stride-2 convs, ReLU, GAP, CE, SGD
  resnet_wide         the same at 16/32 channels: the 3x3 convolutions webtrain runs by Winograd
  mobilenet_style     depthwise-separable convs (group = C), BatchNorm, HardSwish, GAP, CE, AdamW
  bert_style_encoder  token + position embeddings, padding mask via Equal/Expand/Where, 2-head
                      attention with batched MatMul, Gelu (erf), LayerNorm (post-norm), tanh
                      pooler on the [CLS] token, CE, AdamW
  gpt_style_decoder   causal mask from Trilu, pre-norm attention block, tanh-GELU MLP, LM head,
                      logits reshaped to [N*T, V], CE over every position, AdamW
  lstm_classifier     nn.LSTM(batch_first) -> last hidden state -> Linear, CE, AdamW
  small_unet          conv encoder, MaxPool, ConvTranspose, Resize (bilinear and nearest), skip
                      Concat, per-pixel MSE, AdamW

The models, their batches and each case's config and description are in scripts/golden_models.py;
this script trains and records them.

Every case: torch.onnx.export in TRAINING mode, no constant folding, dynamic batch axis,
opset 14 (17 for the two transformers: LayerNormalization); 5 steps, each on its own seeded
random batch; a float64 rerun of the whole trajectory for precision_check; the forward/ check
(train() mode, no_grad, initial parameters, eval batch).

Deterministic (seeded, CPU, one thread). Needs Debian's python3-torch (1.13) and python3-onnx
(1.12). Usage:
  /usr/bin/python3 scripts/make_golden_cases.py [--out tests/golden/cases-models] [name ...]
Then: node tests/golden/run.mjs tests/golden/cases-models/*/
"""
import argparse
import copy
import io
import json
import math
import os
import shutil
import sys
from collections import Counter

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

# The models, batch builders and per-case configs; found beside this script (run as
# /usr/bin/python3 scripts/make_golden_cases.py, Python puts scripts/ on sys.path).
from golden_models import CASES, cls_labels

torch.set_num_threads(1)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_VERSION = f"{torch.__version__} (Debian python3-torch 1.13.1+dfsg)"
NUM_STEPS = 5

TOL = {
    "loss": {"rtol": 1e-5, "atol": 1e-6},
    "grads": {"rtol": 1e-4, "atol": 1e-5},
    "params": {"rtol": 1e-4, "atol": 1e-5},
    "buffers": {"rtol": 1e-4, "atol": 1e-5},
    "outputs": {"rtol": 1e-4, "atol": 1e-5},
    "note": "allclose-style: |actual - expected| <= atol + rtol*|expected|, elementwise. See "
            "precision_check for how far the float32 PyTorch result itself is from a float64 "
            "recomputation.",
}

EVAL_SEM = ("eval model: the forward graph + loss with Dropout disabled and BatchNormalization "
            "training_mode=0, evaluated after the last training step with the parameters after "
            "that step (PyTorch model.eval() under torch.no_grad()). No backward, no update.")
EVAL_SEM_BN = EVAL_SEM + (" BatchNormalization normalizes with its running statistics as updated "
                          "by the training steps (steps[-1].buffers_after), not with the "
                          "statistics of the eval batch.")
EVAL_SEM_PLAIN = EVAL_SEM + " This model has no BatchNormalization or Dropout: the eval model computes the same function as model.onnx."
INF_SEM = ("raw outputs (no loss) of the eval model (same semantics as eval) on the eval batch, "
           "with the parameters after the last training step.")
INITRS_NOTE = ("extra: the same eval-model pass but with the BatchNormalization running statistics "
               "left at their initial_params values (running_mean 0, running_var 1), i.e. what a "
               "runtime that never writes the running-stat outputs of the training graph back would "
               "compute. The main values (loss / outputs) use the running statistics updated by "
               "training.")
ZERO_GRAD_NOTE = ("exact zeros are structural (e.g. ReLU units inactive for the whole batch, embedding "
                  "rows of tokens absent from the batch, padded key positions) and are exactly zero in "
                  "float32 too; for AdamW cases, elements with 0 < |g| < ~1e-6 are the ones where "
                  "parameter differences are amplified. num_rounding_noise_elements counts elements with "
                  "|g_f64| < 1e-6 whose float32 value differs from the float64 one by more than 10% (or "
                  "is zero in only one of the two runs), typically the rounding noise of a gradient that "
                  "is zero (or nearly cancels) in exact arithmetic. "
                  "num_rounding_noise_elements_param_relevant keeps those whose error could move a "
                  "parameter by more than atol/10 (bound lr*|dg|/eps for AdamW, lr*|dg| for SGD).")


# ----------------------------------------------------------------------------------------------
# helpers

DT = {np.float32: "float32", np.int64: "int64", np.int32: "int32"}


class Writer:
    def __init__(self, d):
        self.d = d

    def ref(self, fname, arr):
        arr = np.ascontiguousarray(arr)
        dt = {np.dtype("float32"): "float32", np.dtype("int64"): "int64", np.dtype("int32"): "int32"}[arr.dtype]
        with open(os.path.join(self.d, fname), "wb") as f:
            f.write(arr.astype(arr.dtype.newbyteorder("<")).tobytes())
        return {"file": fname, "dtype": dt, "shape": list(arr.shape)}


def np32(t):
    return t.detach().cpu().numpy().astype(np.float32) if t.is_floating_point() else t.detach().cpu().numpy()


def bn_modules(model):
    return [(n, m) for n, m in model.named_modules() if isinstance(m, nn.BatchNorm2d)]


def loss_fn(kind, out, target):
    if kind == "CrossEntropyLoss":
        return F.cross_entropy(out, target.long())
    return F.mse_loss(out, target)


def make_optimizer(spec, params):
    if spec["type"] == "SGD":
        return torch.optim.SGD(params, lr=spec["lr"])
    return torch.optim.AdamW(params, lr=spec["lr"], betas=tuple(spec["betas"]), eps=spec["eps"],
                             weight_decay=spec["weight_decay"])


def to_dtype(batch, dtype):
    return {k: (v.to(dtype) if v.is_floating_point() else v) for k, v in batch.items()}


def train_run(model, cfg, data, dtype):
    """Trains model (already in dtype) over data; returns the recorded trajectory."""
    names = [s[0] for s in cfg["input_specs"]]
    params = [p for p in model.parameters() if p.requires_grad]
    opt = make_optimizer(cfg["optimizer"], params)
    bns = bn_modules(model)
    # ONNX-spec running statistics (population variance), tracked alongside PyTorch's
    spec_stats = {n: (m.running_mean.clone(), m.running_var.clone()) for n, m in bns}
    captured = {}
    hooks = [m.register_forward_pre_hook(lambda mod, inp, n=n: captured.__setitem__(n, inp[0].detach()))
             for n, m in bns]
    rec = []
    model.train()
    for batch, tgt in data["steps"]:
        batch = to_dtype(batch, dtype)
        tgt = tgt.to(dtype) if tgt.is_floating_point() else tgt
        opt.zero_grad(set_to_none=False)
        out = model(*[batch[n] for n in names])
        loss = loss_fn(cfg["loss"], out, tgt)
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
        opt.step()
        after = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
        buf = {}
        buf_spec = {}
        for n, m in bns:
            buf[n + ".running_mean"] = m.running_mean.detach().clone()
            buf[n + ".running_var"] = m.running_var.detach().clone()
            x = captured[n]
            mean = x.mean(dim=(0, 2, 3))
            var = x.var(dim=(0, 2, 3), unbiased=False)
            mom = m.momentum
            rm, rv = spec_stats[n]
            rm = (1 - mom) * rm + mom * mean
            rv = (1 - mom) * rv + mom * var
            spec_stats[n] = (rm, rv)
            buf_spec[n + ".running_mean"] = rm.clone()
            buf_spec[n + ".running_var"] = rv.clone()
        rec.append({"loss": loss.item(), "grads": grads, "after": after, "buf": buf, "buf_spec": buf_spec})
    for h in hooks:
        h.remove()
    ev_batch = to_dtype(data["eval"][0], dtype)
    ev_tgt = data["eval"][1].to(dtype) if data["eval"][1].is_floating_point() else data["eval"][1]
    model.eval()
    with torch.no_grad():
        ev_out = model(*[ev_batch[n] for n in names])
        ev_loss = loss_fn(cfg["loss"], ev_out, ev_tgt).item()
        extra = None
        if bns:
            m2 = copy.deepcopy(model)
            for _, m in bn_modules(m2):
                m.running_mean.zero_()
                m.running_var.fill_(1.0)
            o2 = m2(*[ev_batch[n] for n in names])
            extra = (loss_fn(cfg["loss"], o2, ev_tgt).item(), o2)
    return {"steps": rec, "eval_loss": ev_loss, "eval_out": ev_out, "initrs": extra}


def diffstats(pairs, tol):
    mad, mrel, ratio = 0.0, 0.0, 0.0
    for a, b in pairs:
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        d = np.abs(a - b)
        if d.size:
            mad = max(mad, float(d.max()))
            big = np.abs(b) > 1e-3
            if big.any():
                mrel = max(mrel, float((d[big] / np.abs(b[big])).max()))
            ratio = max(ratio, float((d / (tol["atol"] + tol["rtol"] * np.abs(b))).max()))
    return {"max_abs_diff": mad, "max_rel_diff_where_abs_gt_1e-3": mrel, "allclose_ratio_at_suggested_tol": ratio}


def grad_magnitudes(r32, r64, opt):
    total = zeros = below7 = below6 = noise = relevant = 0
    min_nz = math.inf
    lr = opt["lr"]
    for s32, s64 in zip(r32["steps"], r64["steps"]):
        for n in s32["grads"]:
            g = s32["grads"][n].double().numpy().ravel()
            h = s64["grads"][n].numpy().ravel()
            total += g.size
            zeros += int((g == 0).sum())
            nz = np.abs(g[g != 0])
            if nz.size:
                min_nz = min(min_nz, float(nz.min()))
            below7 += int((nz < 1e-7).sum())
            below6 += int((nz < 1e-6).sum())
            small = np.abs(h) < 1e-6
            bad = small & ((np.abs(g - h) > 0.1 * np.abs(h)) | ((g == 0) != (h == 0)))
            noise += int(bad.sum())
            dg = np.abs(g - h)[bad]
            bound = lr * dg / opt["eps"] if opt["type"] == "AdamW" else lr * dg
            relevant += int((bound > TOL["params"]["atol"] / 10).sum())
    return {"num_grad_elements_all_steps": total, "num_exact_zero": zeros,
            "min_abs_nonzero": None if min_nz == math.inf else min_nz,
            "num_nonzero_below_1e-7": below7, "num_nonzero_below_1e-6": below6,
            "num_rounding_noise_elements": noise, "num_rounding_noise_elements_param_relevant": relevant,
            "note": ZERO_GRAD_NOTE}


def vi_shape(vi):
    dims = []
    for d in vi.type.tensor_type.shape.dim:
        dims.append(d.dim_param if d.HasField("dim_param") else d.dim_value)
    return dims


ONNX_DT = {1: "float32", 6: "int32", 7: "int64", 9: "bool"}


# ----------------------------------------------------------------------------------------------
# one case


def make_case(name, out_root):
    cfg = CASES[name]
    d = os.path.join(out_root, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(os.path.join(d, "forward", "test_data_set_0"))
    w = Writer(d)
    notes, export_notes = [], []

    torch.manual_seed(cfg["seed"])
    model = cfg["model"]().float()
    model.train()
    init_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    names = [s[0] for s in cfg["input_specs"]]
    n = cfg["batch"]
    is_ce = cfg["loss"] == "CrossEntropyLoss"
    target_name = "labels" if is_ce else "target"

    # data: a fixed random batch per step and one eval batch
    gen = torch.Generator().manual_seed(cfg["seed"] * 1000 + 1)

    def make_batch():
        b = cfg["inputs"](gen, n)
        if is_ce:
            if name == "gpt_style_decoder":
                # next-token labels: the input shifted left, last position a random token
                ids = b["input_ids"]
                nxt = torch.cat([ids[:, 1:], torch.randint(0, cfg["classes"], (n, 1), generator=gen)], 1)
                t = nxt.reshape(-1).to(torch.int32)
            else:
                t = cls_labels(gen, n, cfg["classes"]).to(torch.int32)
        else:
            t = None    # MSE target, made below from the input
        return b, t

    steps_data = []
    for _ in range(NUM_STEPS + 1):
        b, t = make_batch()
        if t is None:   # MSE target with the output's shape: a smooth function of the input plus noise
            x = b["input"]
            t = (0.5 * torch.tanh(x) + 0.1 * torch.randn(x.shape, generator=gen)).float()
        steps_data.append((b, t))
    data = {"steps": steps_data[:NUM_STEPS], "eval": steps_data[NUM_STEPS]}

    # export (training mode, no constant folding, dynamic batch)
    out_name = "logits" if name in ("bert_style_encoder", "gpt_style_decoder") else "output"
    out_dyn = "batch_x_seq" if name == "gpt_style_decoder" else "batch"
    dyn = {k: {0: "batch"} for k in names}
    dyn[out_name] = {0: out_dyn}
    ex = copy.deepcopy(model)
    buf = io.BytesIO()
    ex_inputs = tuple(data["steps"][0][0][k] for k in names)
    torch.onnx.export(ex, ex_inputs, buf, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=names, output_names=[out_name],
                      dynamic_axes=dyn, opset_version=cfg["opset"])
    mp = onnx.load_from_string(buf.getvalue())
    sd_onnx = {k: v for k, v in init_state.items() if not k.endswith("num_batches_tracked")}
    not_in_onnx = [k for k in init_state if k not in sd_onnx]
    inits = {i.name: i for i in mp.graph.initializer}
    # non-persistent buffers (position_ids) are traced as constants or initializers; only
    # state_dict entries may be initializers
    extra_inits = [k for k in inits if k not in sd_onnx]
    if extra_inits:
        raise SystemExit(f"{name}: initializers not in state_dict: {extra_inits}")
    missing = [k for k in sd_onnx if k not in inits]
    if missing:
        raise SystemExit(f"{name}: state_dict entries not initializers: {missing}")
    for init in mp.graph.initializer:
        want = sd_onnx[init.name].numpy()
        have = numpy_helper.to_array(init)
        if have.shape != want.shape or not np.array_equal(have, want):
            diff = float(np.abs(have.astype(np.float64) - want).max()) if have.shape == want.shape else "shape"
            export_notes.append(f"initializer {init.name} differed from the module state after export "
                                f"(max |diff| {diff}); reset to the module's value")
            init.CopyFrom(numpy_helper.from_array(want.astype(have.dtype), init.name))
    onnx.checker.check_model(mp)
    onnx.save(mp, os.path.join(d, "model.onnx"))
    shutil.copyfile(os.path.join(d, "model.onnx"), os.path.join(d, "forward", "model.onnx"))
    init_order = [i.name for i in mp.graph.initializer]
    ops = Counter(nd.op_type for nd in mp.graph.node)

    # training runs: float32 (recorded) and float64 (precision check)
    m32 = copy.deepcopy(model)
    m32.load_state_dict(init_state)
    r32 = train_run(m32, cfg, data, torch.float32)
    m64 = copy.deepcopy(model).double()
    m64.load_state_dict({k: (v.double() if v.is_floating_point() else v) for k, v in init_state.items()})
    r64 = train_run(m64, cfg, data, torch.float64)

    req = [k for k, p in model.named_parameters() if p.requires_grad]
    buffers = [k for k in sd_onnx if k.endswith("running_mean") or k.endswith("running_var")]
    has_bn = bool(buffers)

    def inputs_refs(prefix, batch, tgt, with_target=True):
        r = {}
        for k in names:
            r[k] = w.ref(f"{prefix}__{k}.bin", np32(batch[k]))
        if with_target:
            r[target_name] = w.ref(f"{prefix}__{target_name}.bin", np32(tgt))
        return r

    steps = []
    for k, (rec, (b, t)) in enumerate(zip(r32["steps"], data["steps"])):
        s = {"index": k, "lr": cfg["optimizer"]["lr"], "inputs": inputs_refs(f"step{k}", b, t),
             "loss": rec["loss"],
             "grads": {p: w.ref(f"step{k}__grad__{p}.bin", np32(rec["grads"][p])) for p in req},
             "params_after": {p: w.ref(f"step{k}__param__{p}.bin", np32(rec["after"][p])) for p in req}}
        if has_bn:
            s["buffers_after"] = {p: w.ref(f"step{k}__buffer__{p}.bin", np32(rec["buf"][p])) for p in buffers}
            s["buffers_after_onnx_spec"] = {p: w.ref(f"step{k}__buffer_onnxspec__{p}.bin", np32(rec["buf_spec"][p]))
                                            for p in buffers}
        steps.append(s)

    eb, et = data["eval"]
    eval_inputs = inputs_refs("eval", eb, et)
    ev = {"semantics": EVAL_SEM_BN if has_bn else EVAL_SEM_PLAIN, "inputs": eval_inputs, "loss": r32["eval_loss"]}
    inf = {"semantics": INF_SEM + (" BatchNormalization uses training_mode=0 with the running statistics after the last step." if has_bn else ""),
           "inputs": {k: eval_inputs[k] for k in names},
           "outputs": {out_name: w.ref(f"inference__{out_name}.bin", np32(r32["eval_out"]))}}
    if has_bn:
        ev["loss_initial_running_stats"] = r32["initrs"][0]
        ev["initial_running_stats_note"] = INITRS_NOTE
        inf["outputs_initial_running_stats"] = {out_name: w.ref(f"inference_initrs__{out_name}.bin", np32(r32["initrs"][1]))}
        inf["initial_running_stats_note"] = INITRS_NOTE

    # forward/: model.onnx as exported (train mode), initial params, eval batch, no_grad
    mf = copy.deepcopy(model)
    mf.load_state_dict(init_state)
    mf.train()
    with torch.no_grad():
        fwd_out = mf(*[eb[k] for k in names])
    fwd_in_refs, fwd_out_refs = [], []
    for i, k in enumerate(names):
        arr = np32(eb[k])
        fn = f"forward/test_data_set_0/input_{i}.pb"
        with open(os.path.join(d, fn), "wb") as f:
            f.write(numpy_helper.from_array(arr, k).SerializeToString())
        fwd_in_refs.append({"file": fn, "name": k, "dtype": DT[arr.dtype.type], "shape": list(arr.shape)})
    arr = np32(fwd_out)
    fn = "forward/test_data_set_0/output_0.pb"
    with open(os.path.join(d, fn), "wb") as f:
        f.write(numpy_helper.from_array(arr, out_name).SerializeToString())
    fwd_out_refs.append({"file": fn, "name": out_name, "dtype": "float32", "shape": list(arr.shape)})
    # float64 forward of the same (module, not graph) for the forward check
    mf64 = copy.deepcopy(model).double()
    mf64.load_state_dict({k: (v.double() if v.is_floating_point() else v) for k, v in init_state.items()})
    mf64.train()
    with torch.no_grad():
        fwd64 = mf64(*[to_dtype(eb, torch.float64)[k] for k in names])
    fwd_ratio = diffstats([(arr, fwd64.numpy())], TOL["outputs"])["allclose_ratio_at_suggested_tol"]
    forward = {
        "layout": "ONNX backend test layout: forward/model.onnx + forward/test_data_set_0/input_K.pb and "
                  "output_K.pb, one serialized onnx.TensorProto per graph input / graph output in graph "
                  "order, each with its 'name' set to the graph input / output name.",
        "model": "forward/model.onnx", "test_data_set": "forward/test_data_set_0",
        "inputs": fwd_in_refs, "outputs": fwd_out_refs,
        "semantics": "outputs of model.onnx exactly as exported (training mode" +
                     (": BatchNormalization training_mode=1 normalizes with the statistics of this batch"
                      if has_bn else "") +
                     ") with the INITIAL parameters (the model.onnx initializers = initial_params) on the "
                     "eval batch. Forward only: no loss, no backward, no update. The inputs are the same "
                     "tensors as eval.inputs.",
        "tolerance": {"rtol": 1e-4, "atol": 1e-5},
        "check": {"method": "the PyTorch module in train() mode under no_grad, recomputed in float64 from the "
                            "same initial values and inputs; max over output elements of |expected - f64| / "
                            "(atol + rtol*|f64|). (onnx 1.12 has no reference evaluator, so the graph itself "
                            "is not evaluated in float64 here; the golden runner and onnxruntime check it.)",
                  "allclose_ratio_vs_float64_module": fwd_ratio},
    }

    # precision check
    def pairs(key):
        out = []
        for s32, s64 in zip(r32["steps"], r64["steps"]):
            for p in s32[key]:
                out.append((s32[key][p].double().numpy(), s64[key][p].numpy()))
        return out
    prec = {"method": "the whole training trajectory was recomputed in float64 (same initial values, same "
                      "data); numbers are worst-case over all steps of max|f32 - f64| and of the allclose "
                      "ratio max(|f32-f64| / (atol + rtol*|f64|)) at the suggested tolerance (<1 passes).",
            "loss": diffstats([(s["loss"], h["loss"]) for s, h in zip(r32["steps"], r64["steps"])], TOL["loss"]),
            "grads": diffstats(pairs("grads"), TOL["grads"]),
            "params": diffstats(pairs("after"), TOL["params"])}
    if has_bn:
        prec["buffers"] = diffstats(pairs("buf"), TOL["buffers"])
    prec["eval_loss"] = diffstats([(r32["eval_loss"], r64["eval_loss"])], TOL["loss"])
    prec["outputs"] = diffstats([(r32["eval_out"].double().numpy(), r64["eval_out"].numpy())], TOL["outputs"])
    if has_bn:
        prec["eval_loss_initial_running_stats"] = diffstats([(r32["initrs"][0], r64["initrs"][0])], TOL["loss"])
        prec["outputs_initial_running_stats"] = diffstats(
            [(r32["initrs"][1].double().numpy(), r64["initrs"][1].numpy())], TOL["outputs"])
    prec["grad_magnitudes"] = grad_magnitudes(r32, r64, cfg["optimizer"])
    if has_bn:
        # how far apart the two running-variance conventions are here
        last = r32["steps"][-1]
        gap = max(float((last["buf"][p] - last["buf_spec"][p]).abs().max()) for p in buffers)
        prec["buffers_pytorch_vs_onnx_spec_max_abs_diff_last_step"] = gap

    # graph inputs/outputs
    def spec_of(vi):
        return {"name": vi.name, "dtype": ONNX_DT[vi.type.tensor_type.elem_type], "shape": vi_shape(vi)}
    g_in = [spec_of(v) for v in mp.graph.input if v.name not in inits]
    g_out = [spec_of(v) for v in mp.graph.output]
    assert [g["name"] for g in g_in] == names, (g_in, names)
    out_shape = g_out[0]["shape"]
    if is_ce:
        tgt_spec = {"name": "labels", "dtype": "int32", "shape": [out_shape[0]] + out_shape[2:]}
    else:
        tgt_spec = {"name": "target", "dtype": "float32", "shape": out_shape}

    init_params = {}
    for k in init_order:
        init_params[k] = w.ref(f"init__{k}.bin", np32(init_state[k]))

    if cfg["optimizer"]["type"] == "AdamW":
        notes.append("AdamW mode 0 (torch.optim.AdamW) with lr 1e-3, betas (0.9, 0.999), eps 1e-8, "
                     "weight_decay 0.01 on every trainable tensor (biases and norm parameters included).")
    if has_bn:
        notes.append("Convolutions feeding BatchNormalization have no bias (its gradient would be zero in exact "
                     "arithmetic).")
        notes.append("The *.running_mean / *.running_var initializers are listed in 'buffers', not in "
                     "requires_grad. They are updated by the forward pass, not by the optimizer: running = "
                     "0.9*running + 0.1*batch_stat (ONNX momentum attribute 0.9 = 1 - PyTorch momentum 0.1). "
                     "steps[k].buffers_after follows PyTorch (running_var uses the UNBIASED batch variance, "
                     "n/(n-1) with n = N*H*W per channel); steps[k].buffers_after_onnx_spec follows the ONNX "
                     "spec (population variance). On these small feature maps the two differ by more than the "
                     "tolerance (precision_check.buffers_pytorch_vs_onnx_spec_max_abs_diff_last_step): "
                     "buffers_after is the expected value.")
        notes.append("eval.loss and inference.outputs use the running statistics reached after the last step "
                     "(steps[-1].buffers_after); *_initial_running_stats give the same pass with the initial "
                     "running statistics (0 and 1).")
        notes.append("torch.onnx.export in training mode runs one forward pass while tracing, which moves the "
                     "running statistics; model.onnx initializers were reset to the module's initial values "
                     "so that they equal initial_params.")
    extra_notes = {
        "bert_style_encoder": [
            "attention_mask is an int64 graph input [N,10]; the model builds the key mask itself "
            "(Equal(mask, 0) -> Unsqueeze x2 -> Expand to [N,2,T,T]) and applies it with Where(mask, "
            "float32 min, scores): masked probabilities are exactly 0, so the key/value rows of padded "
            "positions get exactly zero gradient (structural zeros).",
            "Only the [CLS] row (position 0) of the last layer reaches the loss (Gather on axis 1); the "
            "other rows of the post-attention layers get exactly zero gradient.",
            "Token id 0 is padding; ids of tokens absent from a batch get exactly zero embedding gradient. "
            "position_ids is a non-persistent buffer traced as a constant.",
            "k has no bias: a key bias adds the same amount to every score of a softmax row, so its "
            "gradient is identically zero and AdamW would turn rounding noise into lr-sized updates.",
            "GELU is the exact erf form (Div, Erf, Add, Mul, Mul)."],
        "gpt_style_decoder": [
            "The graph output logits has shape [N*8, 32] (Reshape inside the model); its first dimension "
            "is named 'batch_x_seq' (= 8 * batch). labels is int32 [N*8]: the next token at every "
            "position (the last position gets a random token). CrossEntropyLoss averages over all N*8 "
            "positions.",
            "The causal mask is Trilu(ConstantOfShape ones [T,T], upper=0) compared with 0 (Equal) and "
            "applied with Where(mask, -inf, scores); every row keeps its diagonal, so Softmax never sees a "
            "fully masked row.",
            "k has no bias (its gradient would be identically zero, see bert_style_encoder). pos_emb is a "
            "top-level nn.Parameter (initializer 'pos_emb'). GELU uses the tanh approximation "
            "(exported as Mul/Add/Tanh nodes: 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x*x*x)))).",
            "Token ids absent from a batch get exactly zero embedding gradient."],
        "lstm_classifier": [
            "The LSTM parameters stay the PyTorch initializers lstm.weight_ih_l0 [64,5], lstm.weight_hh_l0 "
            "[64,16], lstm.bias_ih_l0 [64], lstm.bias_hh_l0 [64]; the graph reorders their gate blocks and "
            "concatenates the two biases for the ONNX LSTM node, so the gradient must flow back through "
            "those Slice/Concat/Unsqueeze nodes. bias_ih_l0 and bias_hh_l0 have identical gradients.",
            "The initial hidden and cell states are zeros built in the graph from the batch size.",
            "Tolerances are the FORMAT.md defaults: precision_check shows the float32 values are well "
            "inside them for these 6 time steps."],
        "small_unet": [
            "F.interpolate(bilinear, align_corners=False) exports as Resize(mode=linear, "
            "coordinate_transformation_mode=half_pixel) and F.interpolate(nearest) as Resize(mode=nearest, "
            "asymmetric, floor); the output sizes are computed from the input shape in the graph.",
            "target is float32 [N,1,16,16]: 0.5*tanh(input) + 0.1*noise. MSE averages over every pixel.",
            "ReLU channels inactive for the whole batch give exactly zero gradients (structural)."],
        "resnet_style": ["SGD: gradients that are zero in exact arithmetic would be recorded as rounding noise; "
                         "compare them with atol only (none are expected here: no conv has a bias)."],
        "resnet_wide": ["SGD: as resnet_style. Winograd's results differ from im2col + GEMM's in the last "
                        "bits only (backend/cpu/conv_winograd.h): the default tolerances hold."],
        "mobilenet_style": ["Depthwise convolutions are Conv nodes with group = channels (weights [C,1,3,3]). "
                            "HardSwish exports as the opset-14 HardSwish op."],
    }
    notes += extra_notes.get(name, [])

    verification = {
        "onnx_checker": "passed",
        "forward_module_vs_float64_allclose_ratio": fwd_ratio,
        "note": "onnx 1.12 has no float64 reference evaluator: the exported graph is checked by the ONNX "
                "checker here, and its values by the golden runner (and any ONNX runtime) against the "
                "forward/ folder. model.onnx initializers were compared with the module's state_dict "
                "(see export_notes).",
    }

    case = {
        "name": name, "set": "models", "description": cfg["description"],
        "opset": cfg["opset"], "torch_version": TORCH_VERSION, "onnx_version": onnx.__version__,
        "model": "model.onnx",
        "graph_inputs": g_in, "graph_outputs": g_out,
        "input_names": names, "output_names": [out_name],
        "target_names": [target_name], "target_inputs": [tgt_spec],
        "training_graph_input_names": names + [target_name],
        "batch_size": n,
        "onnx_op_types": dict(sorted(ops.items())),
        "initializer_names": init_order,
        "parameter_name_map_torch_to_onnx": {k: k for k in init_order},
        "initializer_renames": {},
        "requires_grad": req, "frozen_params": [], "buffers": buffers,
        "loss": cfg["loss"], "loss_reduction": "mean",
        "optimizer": cfg["optimizer"], "lr_schedule": None, "num_steps": NUM_STEPS,
        "initial_params": init_params,
        "steps": steps, "eval": ev, "inference": inf, "forward": forward,
        "precision_check": prec, "tolerance": TOL, "verification": verification,
        "notes": notes, "export_notes": export_notes,
        "state_dict_entries_not_in_onnx": not_in_onnx,
    }
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(d) for x in fs)
    pm = prec["grad_magnitudes"]
    worst = max(v["allclose_ratio_at_suggested_tol"] for v in prec.values()
                if isinstance(v, dict) and "allclose_ratio_at_suggested_tol" in v)
    if pm["num_rounding_noise_elements_param_relevant"] or worst > 0.1:
        # FORMAT.md: every recorded value must sit well inside the tolerance of its float64 value,
        # and no AdamW case may have rounding-noise gradients; pick another seed if this fires.
        raise SystemExit(f"{name}: float32 vs float64 too far apart (worst allclose ratio {worst:.3g}, "
                         f"param-relevant rounding-noise gradients {pm['num_rounding_noise_elements_param_relevant']})")
    print(f"{name}: {size/1024:.0f} KB, ops {dict(ops)}, worst ratios grads "
          f"{prec['grads']['allclose_ratio_at_suggested_tol']:.3g} params "
          f"{prec['params']['allclose_ratio_at_suggested_tol']:.3g}, rounding-noise grads "
          f"{pm['num_rounding_noise_elements']} (param-relevant {pm['num_rounding_noise_elements_param_relevant']})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "golden", "cases-models"))
    ap.add_argument("names", nargs="*", default=list(CASES))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for nm in a.names:
        if nm not in CASES:
            raise SystemExit(f"unknown case {nm}; known: {', '.join(CASES)}")
        make_case(nm, a.out)


if __name__ == "__main__":
    main()
