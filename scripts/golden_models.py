"""The real-model golden cases' models (scripts/make_golden_cases.py writes them out).

The nn.Module of each case, the batch builders and CASES: per case its seed, model, batch size,
opset, loss, optimizer (ADAMW or SGD, as recorded in case.json), input builder and specs, and the
description that case.json carries. Building a model or a batch draws from the generator or seed
the caller sets; importing this module draws nothing.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ADAMW = {"type": "AdamW", "adam_mode": 0, "lr": 1e-3, "betas": [0.9, 0.999], "eps": 1e-8,
         "weight_decay": 0.01, "bias_correction": True,
         "semantics": "adam_mode 0 = torch.optim.AdamW (amsgrad=False), per trainable tensor, t = "
                      "1-based step count: p <- p*(1 - lr*weight_decay); m <- b1*m + (1-b1)*g; v <- "
                      "b2*v + (1-b2)*g^2; p <- p - (lr/(1-b1^t)) * m / (sqrt(v)/sqrt(1-b2^t) + eps). "
                      "m, v start at 0. Frozen params are not in the optimizer (no weight decay "
                      "applied to them)."}
SGD = {"type": "SGD", "lr": 0.05,
       "semantics": "plain SGD: p <- p - lr*g (no momentum, no weight decay)"}


# ----------------------------------------------------------------------------------------------
# models


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        s = x if self.down is None else self.down(x)
        return F.relu(y + s)


class ResNetStyle(nn.Module):
    def __init__(self, w=8):
        super().__init__()
        self.stem = nn.Conv2d(3, w, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(w)
        self.layer1 = BasicBlock(w, w, 1)
        self.layer2 = BasicBlock(w, 2 * w, 2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2 * w, 10)

    def forward(self, x):
        x = F.relu(self.bn(self.stem(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def conv_bn_hs(cin, cout, k, stride, groups=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.Hardswish())


class MobileNetStyle(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn_hs(3, 8, 3, 2)
        self.dw1 = conv_bn_hs(8, 8, 3, 1, groups=8)
        self.pw1 = conv_bn_hs(8, 16, 1, 1)
        self.dw2 = conv_bn_hs(16, 16, 3, 2, groups=16)
        self.pw2 = conv_bn_hs(16, 24, 1, 1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        x = self.pw2(self.dw2(self.pw1(self.dw1(self.stem(x)))))
        return self.fc(torch.flatten(self.pool(x), 1))


class MHA(nn.Module):
    """Multi-head self-attention with batched MatMul; the key projection has no bias (its
    gradient would be identically zero: it shifts every score of a softmax row equally)."""

    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.dk = d // heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)

    def forward(self, x, mask, fill):
        n, t, d = x.shape
        def split(z):
            return z.reshape(n, t, self.h, self.dk).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.dk))
        scores = torch.where(mask, torch.tensor(fill, dtype=scores.dtype), scores)
        p = torch.softmax(scores, dim=-1)
        y = torch.matmul(p, v).transpose(1, 2).reshape(n, t, d)
        return self.o(y)


class BertStyleEncoder(nn.Module):
    def __init__(self, vocab=30, t=10, d=32, heads=2, ff=64, classes=4):
        super().__init__()
        self.heads = heads
        self.tok_emb = nn.Embedding(vocab, d)
        self.pos_emb = nn.Embedding(t, d)
        self.emb_ln = nn.LayerNorm(d)
        self.attn = MHA(d, heads)
        self.ln1 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d)
        self.pooler = nn.Linear(d, d)
        self.classifier = nn.Linear(d, classes)
        self.register_buffer("position_ids", torch.arange(t).unsqueeze(0), persistent=False)

    def forward(self, input_ids, attention_mask):
        n, t = input_ids.shape
        x = self.tok_emb(input_ids) + self.pos_emb(self.position_ids)
        x = self.emb_ln(x)
        # padding mask [N,T] -> [N,H,T,T] (True = masked key), applied with Where
        m = (attention_mask == 0).unsqueeze(1).unsqueeze(2).expand(n, self.heads, t, t)
        x = self.ln1(x + self.attn(x, m, torch.finfo(torch.float32).min))
        x = self.ln2(x + self.ff2(F.gelu(self.ff1(x))))
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return self.classifier(pooled)


class GptStyleDecoder(nn.Module):
    def __init__(self, vocab=32, t=8, d=32, heads=2, ff=64):
        super().__init__()
        self.vocab = vocab
        self.tok_emb = nn.Embedding(vocab, d)
        self.pos_emb = nn.Parameter(torch.randn(1, t, d) * 0.1)
        self.ln1 = nn.LayerNorm(d)
        self.attn = MHA(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, ff)
        self.proj = nn.Linear(ff, d)
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, input_ids):
        n, t = input_ids.shape
        x = self.tok_emb(input_ids) + self.pos_emb
        causal = torch.tril(torch.ones(t, t, dtype=x.dtype))           # Trilu
        x = x + self.attn(self.ln1(x), causal == 0, float("-inf"))    # Equal, Where
        x = x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        logits = self.lm_head(self.ln_f(x))
        return logits.reshape(-1, self.vocab)                          # [N*T, V]


class LstmClassifier(nn.Module):
    def __init__(self, f=5, h=16, classes=3):
        super().__init__()
        self.lstm = nn.LSTM(f, h, batch_first=True)
        self.fc = nn.Linear(h, classes)

    def forward(self, x):
        _, (h_n, _) = self.lstm(x)
        return self.fc(h_n[-1])


class SmallUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1a = nn.Conv2d(1, 8, 3, padding=1)
        self.enc1b = nn.Conv2d(8, 8, 3, padding=1)
        self.enc2 = nn.Conv2d(8, 16, 3, padding=1)
        self.mid = nn.Conv2d(16, 16, 3, padding=1)
        self.up1 = nn.ConvTranspose2d(16, 16, 2, stride=2)
        self.dec1 = nn.Conv2d(32, 16, 3, padding=1)
        self.dec2 = nn.Conv2d(24, 8, 3, padding=1)
        self.out = nn.Conv2d(8, 1, 1)
        self.side = nn.Conv2d(16, 1, 1)

    def forward(self, x):
        e1 = F.relu(self.enc1b(F.relu(self.enc1a(x))))              # [N,8,16,16]
        e2 = F.relu(self.enc2(F.max_pool2d(e1, 2)))                  # [N,16,8,8]
        m = F.relu(self.mid(F.max_pool2d(e2, 2)))                    # [N,16,4,4]
        d1 = F.relu(self.dec1(torch.cat([self.up1(m), e2], 1)))      # ConvTranspose, Concat
        u2 = F.interpolate(d1, scale_factor=2.0, mode="bilinear", align_corners=False)
        d2 = F.relu(self.dec2(torch.cat([u2, e1], 1)))               # Resize linear, Concat
        side = F.interpolate(self.side(m), scale_factor=4.0, mode="nearest")  # Resize nearest
        return self.out(d2) + side


# ----------------------------------------------------------------------------------------------
# case definitions: model, data, loss, optimizer


def img_batch(gen, n, c, h, w):
    return {"input": torch.randn(n, c, h, w, generator=gen)}


def cls_labels(gen, n, k):
    return torch.randint(0, k, (n,), generator=gen)


def bert_batch(gen, n, t=10, vocab=30):
    ids = torch.randint(1, vocab, (n, t), generator=gen)
    lengths = torch.randint(5, t + 1, (n,), generator=gen)
    lengths[0] = t
    mask = (torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).long()
    ids = ids * mask                                               # pad id 0
    return {"input_ids": ids, "attention_mask": mask}


CASES = {
    "resnet_style": dict(
        seed=101, model=ResNetStyle, batch=4, opset=14, loss="CrossEntropyLoss", optimizer=SGD,
        inputs=lambda g, n: img_batch(g, n, 3, 12, 12), classes=10,
        input_specs=[("input", "float32", ["batch", 3, 12, 12])],
        description="ResNet-style CNN on [N,3,12,12]: stem Conv3x3(3,8)-BN-ReLU, BasicBlock(8,8) with "
                    "identity shortcut, BasicBlock(8,16,stride 2) with Conv1x1(stride 2)-BN shortcut "
                    "(residual Add, ReLU), AdaptiveAvgPool2d(1)-Flatten-Linear(16,10); convs without "
                    "bias (BatchNorm follows); cross-entropy; plain SGD lr 0.05. BatchNormalization "
                    "exported in training mode (batch statistics, running statistics updated)."),
    "resnet_wide": dict(
        seed=111, model=lambda: ResNetStyle(16), batch=4, opset=14, loss="CrossEntropyLoss", optimizer=SGD,
        inputs=lambda g, n: img_batch(g, n, 3, 12, 12), classes=10,
        input_specs=[("input", "float32", ["batch", 3, 12, 12])],
        description="resnet_style at twice the width: stem Conv3x3(3,16)-BN-ReLU, BasicBlock(16,16), "
                    "BasicBlock(16,32,stride 2) with Conv1x1(stride 2)-BN shortcut, GAP, Linear(32,10); "
                    "CE; plain SGD lr 0.05. Its stride-1 3x3 convolutions (16 and 32 channels, 36-144 "
                    "tiles of 2x2 at batch 4) are the ones webtrain runs by Winograd F(2x2,3x3)."),
    "mobilenet_style": dict(
        seed=202, model=MobileNetStyle, batch=4, opset=14, loss="CrossEntropyLoss", optimizer=ADAMW,
        inputs=lambda g, n: img_batch(g, n, 3, 16, 16), classes=10,
        input_specs=[("input", "float32", ["batch", 3, 16, 16])],
        description="MobileNet-style CNN on [N,3,16,16]: Conv3x3(3,8,stride 2)-BN-HardSwish, depthwise "
                    "Conv3x3(8, group 8)-BN-HardSwish, pointwise Conv1x1(8,16)-BN-HardSwish, depthwise "
                    "Conv3x3(16, group 16, stride 2)-BN-HardSwish, pointwise Conv1x1(16,24)-BN-HardSwish, "
                    "AdaptiveAvgPool2d(1)-Flatten-Linear(24,10); convs without bias; cross-entropy; AdamW "
                    "(mode 0). BatchNormalization exported in training mode."),
    "bert_style_encoder": dict(
        seed=309, model=BertStyleEncoder, batch=4, opset=17, loss="CrossEntropyLoss", optimizer=ADAMW,
        inputs=lambda g, n: bert_batch(g, n), classes=4,
        input_specs=[("input_ids", "int64", ["batch", 10]), ("attention_mask", "int64", ["batch", 10])],
        description="BERT-style encoder: int64 input_ids [N,10] (vocab 30, pad id 0) and int64 "
                    "attention_mask [N,10] (1 = token, 0 = padding at the end; row 0 of every batch is "
                    "full length) -> token Embedding(30,32) + position Embedding(10,32) (Gather on a "
                    "position_ids constant) -> LayerNorm -> 2-head self-attention (q/v/out projections "
                    "with bias, k without; batched MatMul; padded keys masked with Equal/Unsqueeze/Expand "
                    "to [N,2,T,T] and Where(mask, float32 min, scores); Softmax) -> residual + LayerNorm "
                    "-> GELU(erf) MLP 32-64-32 -> residual + LayerNorm -> [CLS] token (position 0) -> "
                    "pooler Linear(32,32)+Tanh -> Linear(32,4); cross-entropy; AdamW (mode 0). Opset 17 "
                    "(LayerNormalization)."),
    "gpt_style_decoder": dict(
        seed=404, model=GptStyleDecoder, batch=4, opset=17, loss="CrossEntropyLoss", optimizer=ADAMW,
        inputs=lambda g, n: {"input_ids": torch.randint(0, 32, (n, 8), generator=g)}, classes=32,
        labels_per_sample=8,
        input_specs=[("input_ids", "int64", ["batch", 8])],
        description="GPT-style decoder block: int64 input_ids [N,8] (vocab 32) -> token Embedding(32,32) "
                    "+ learned position parameter pos_emb [1,8,32] -> pre-norm block: LayerNorm, 2-head "
                    "causal self-attention (causal mask = Trilu(ones(T,T)) == 0, Where(mask, -inf, "
                    "scores), Softmax; q/v/out projections with bias, k without), residual; LayerNorm, "
                    "GELU(tanh approximation) MLP 32-64-32, residual -> final LayerNorm -> LM head "
                    "Linear(32,32) -> Reshape to logits [N*8, 32]; cross-entropy over every position "
                    "(labels = next tokens, int32 [N*8]); AdamW (mode 0). Opset 17 "
                    "(LayerNormalization)."),
    "lstm_classifier": dict(
        seed=505, model=LstmClassifier, batch=8, opset=14, loss="CrossEntropyLoss", optimizer=ADAMW,
        inputs=lambda g, n: {"input": torch.randn(n, 6, 5, generator=g)}, classes=3,
        input_specs=[("input", "float32", ["batch", 6, 5])],
        description="LSTM classifier: input [N,6,5] (batch_first) -> nn.LSTM(5,16, batch_first=True, one "
                    "layer, zero initial state) -> last hidden state h_n[-1] [N,16] -> Linear(16,3); "
                    "cross-entropy; AdamW (mode 0). Exported as an ONNX LSTM node (PyTorch's i,f,g,o gate "
                    "blocks are reordered to ONNX's i,o,f,c with Slice/Concat on the initializers inside "
                    "the graph, since nothing is constant-folded)."),
    "small_unet": dict(
        seed=606, model=SmallUNet, batch=4, opset=14, loss="MSELoss", optimizer=ADAMW,
        inputs=lambda g, n: img_batch(g, n, 1, 16, 16),
        input_specs=[("input", "float32", ["batch", 1, 16, 16])],
        description="Small U-Net on [N,1,16,16]: encoder Conv3x3(1,8)-ReLU-Conv3x3(8,8)-ReLU (e1) -> "
                    "MaxPool2 -> Conv3x3(8,16)-ReLU (e2) -> MaxPool2 -> Conv3x3(16,16)-ReLU (m, 4x4); "
                    "decoder ConvTranspose2d(16,16,k2,s2) -> Concat with e2 -> Conv3x3(32,16)-ReLU -> "
                    "F.interpolate(x2, bilinear, align_corners=False) (Resize linear) -> Concat with e1 "
                    "-> Conv3x3(24,8)-ReLU -> Conv1x1(8,1); plus a side path Conv1x1(16,1) on m -> "
                    "F.interpolate(x4, nearest) (Resize nearest) added to the output; per-pixel MSE "
                    "against a float32 target [N,1,16,16]; AdamW (mode 0)."),
}
