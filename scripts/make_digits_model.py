#!/usr/bin/python3
"""Makes the main job's demo: a small pretrained digit classifier and a "personal" data set.

Data: scikit-learn's 8x8 handwritten digits (load_digits, bundled in Debian's python3-sklearn:
no download), pixels scaled to [0, 1]. The samples are split once, with a fixed seed:

  public    1297 samples, as written: the classifier is pretrained on 1197 of them and checked
            on the other 100;
  personal  the other 500 samples, as written by one person who slants every digit strongly
            (a horizontal shear, 0.35 px per row, bilinear): this distribution shift costs the
            pretrained model about a third of its accuracy. 250 are for fine-tuning (train),
            250 to measure it (test).

Model: Linear(64,32) - ReLU - Linear(32,10), logits out, trained with AdamW for 30 epochs
(about a second on a CPU), exported with torch.onnx.export in TRAINING mode (no constant
folding, opset 14, input 'input' [batch,64], output 'output' [batch,10]) so that the
parameters stay initializers webtrain can train.

Writes demo/models/digits/:
  model.onnx                                    the pretrained classifier
  personal_train_x.bin, personal_test_x.bin     float32 [N,64], little-endian, row-major
  personal_train_y.bin, personal_test_y.bin     int32 [N] class indices 0..9
  meta.json                                     shapes, counts, the pretrained accuracies

Deterministic: seeded, one CPU thread. Needed only to regenerate the demo (python3-sklearn,
python3-torch from Debian); users and CI use the committed files.
  /usr/bin/python3 scripts/make_digits_model.py
"""
import json
import os
import sys

import numpy as np
import torch
from sklearn.datasets import load_digits

SEED = 0
PUBLIC = 1297          # the rest (500) is the personal set
PUBLIC_TEST = 100
PERSONAL_TRAIN = 250
SLANT = 0.35           # pixels of horizontal shift per row, relative to the middle row
EPOCHS, BATCH, LR = 30, 64, 1e-2

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'demo', 'models', 'digits')


def slant(img, s):
    """Shears an HxW image horizontally: row r moves right by s * (middle - r) pixels."""
    h, w = img.shape
    out = np.zeros_like(img)
    cols = np.arange(w)
    for r in range(h):
        src = cols - s * ((h - 1) / 2 - r)
        x0 = np.floor(src).astype(int)
        f = (src - x0).astype(img.dtype)
        for x, wt in ((x0, 1 - f), (x0 + 1, f)):
            ok = (x >= 0) & (x < w)
            out[r, ok] += wt[ok] * img[r, x[ok]]
    return out


class DigitsMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 32)
        self.fc2 = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def accuracy(net, x, y):
    with torch.no_grad():
        return float((net(torch.from_numpy(x)).argmax(1).numpy() == y).mean())


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int64)
    order = np.random.RandomState(SEED).permutation(len(images))
    pub, per = order[:PUBLIC], order[PUBLIC:]

    pub_x = images[pub].reshape(-1, 64)
    pub_y = labels[pub]
    pub_train_x, pub_train_y = pub_x[PUBLIC_TEST:], pub_y[PUBLIC_TEST:]
    pub_test_x, pub_test_y = pub_x[:PUBLIC_TEST], pub_y[:PUBLIC_TEST]
    per_x = np.stack([slant(im, SLANT) for im in images[per]]).reshape(-1, 64).astype(np.float32)
    per_y = labels[per]
    splits = {
        'personal_train': (per_x[:PERSONAL_TRAIN], per_y[:PERSONAL_TRAIN]),
        'personal_test': (per_x[PERSONAL_TRAIN:], per_y[PERSONAL_TRAIN:]),
    }

    net = DigitsMLP()
    opt = torch.optim.AdamW(net.parameters(), lr=LR)
    gen = torch.Generator().manual_seed(SEED)
    tx, ty = torch.from_numpy(pub_train_x), torch.from_numpy(pub_train_y)
    for _ in range(EPOCHS):
        idx = torch.randperm(len(tx), generator=gen)
        for i in range(0, len(tx), BATCH):
            b = idx[i:i + BATCH]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(tx[b]), ty[b]).backward()
            opt.step()
    net.eval()

    acc = {
        'public_train': accuracy(net, pub_train_x, pub_train_y),
        'public_test': accuracy(net, pub_test_x, pub_test_y),
        **{k: accuracy(net, x, y) for k, (x, y) in splits.items()},
    }

    os.makedirs(OUT, exist_ok=True)
    model_path = os.path.join(OUT, 'model.onnx')
    torch.onnx.export(
        net, torch.zeros(1, 64), model_path,
        training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False, opset_version=14,
        input_names=['input'], output_names=['output'],
        dynamic_axes={'input': {0: 'batch'}, 'output': {0: 'batch'}})

    files = {}
    for k, (x, y) in splits.items():
        for suffix, arr, dtype in (('x', x, '<f4'), ('y', y, '<i4')):
            name = f'{k}_{suffix}.bin'
            a = np.ascontiguousarray(arr.astype(dtype))
            a.tofile(os.path.join(OUT, name))
            files[f'{k}_{suffix}'] = {'file': name, 'dtype': 'float32' if suffix == 'x' else 'int32',
                                      'shape': list(a.shape)}
    meta = {
        'description': "8x8 handwritten digits (scikit-learn's load_digits), pixels in [0,1]. "
                       "model.onnx: Linear(64,32)-ReLU-Linear(32,10) pretrained on 'public' digits. "
                       f"'personal': held-out digits slanted by {SLANT} px per row (one person's "
                       "handwriting); the pretrained model does worse there.",
        'made_by': 'scripts/make_digits_model.py',
        'seed': SEED,
        'slant_px_per_row': SLANT,
        'torch_version': torch.__version__,
        'model': {'file': 'model.onnx', 'opset': 14, 'input': {'name': 'input', 'shape': ['batch', 64]},
                  'output': {'name': 'output', 'shape': ['batch', 10]},
                  'parameters': [n for n, _ in net.named_parameters()]},
        'counts': {'public_train': len(pub_train_y), 'public_test': len(pub_test_y),
                   **{k: len(y) for k, (_, y) in splits.items()}},
        'files': files,
        'pretrained_accuracy': {k: round(v, 4) for k, v in acc.items()},
    }
    with open(os.path.join(OUT, 'meta.json'), 'w') as f:
        json.dump(meta, f, indent=1)
        f.write('\n')
    print('wrote', os.path.normpath(OUT), json.dumps(meta['pretrained_accuracy']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
