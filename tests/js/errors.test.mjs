// Errors that say what to do: a requiresGrad / frozenParams typo lists the closest parameter
// names; a model whose weights were folded into anonymous constants (exported in eval mode or
// with constant folding) says how to export it for training; InferenceSession.create names the
// ops webtrain lacks at create. (Truncated checkpoints: checkpoint.test.mjs; the C-level cases:
// tests/c/test_bad_input.c and tests/c/test_bad_input_train.c.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { InferenceSession, Module, CheckpointState, WebtrainError, artifacts } from '../../js/index.js';

const MLP = new URL('../golden/cases/mlp_ce_adamw/model.onnx', import.meta.url);
const mlpBytes = new Uint8Array(await readFile(MLP));
const EXPORT = 'torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)';

/** The model's bytes with every occurrence of each name replaced by one of the same length (the protobuf stays valid). */
function renamed(bytes, pairs) {
  const out = bytes.slice();
  for (const [from, to] of pairs) {
    assert.equal(from.length, to.length);
    const a = new TextEncoder().encode(from);
    const b = new TextEncoder().encode(to);
    let hits = 0;
    for (let i = 0; i + a.length <= out.length; i++) {
      if (a.every((c, k) => out[i + k] === c)) {
        out.set(b, i);
        hits++;
      }
    }
    assert.ok(hits > 0, `'${from}' is in the model`);
  }
  return out;
}

function rejectsWith(promise, pattern) {
  return assert.rejects(promise, (e) => {
    assert.ok(e instanceof WebtrainError, `a WebtrainError: ${e}`);
    assert.match(e.message, pattern);
    return true;
  });
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('a requiresGrad / frozenParams typo lists the closest parameter names', async () => {
  await rejectsWith(
    artifacts.generateArtifacts(MLP, { requiresGrad: ['fc1.wieght', 'fc1.bias'], loss: 'CrossEntropyLoss' }),
    /requires_grad: 'fc1\.wieght' is not an initializer \(parameter\) of the model; did you mean 'fc1\.weight'\? \(parameters: fc1\.weight, fc1\.bias, fc2\.weight, fc2\.bias\)/,
  );
  // equally close names are all offered
  await rejectsWith(
    artifacts.generateArtifacts(MLP, { requiresGrad: ['fc1.weight'], frozenParams: ['fc.bias'], loss: 'CrossEntropyLoss' }),
    /frozen_params: 'fc\.bias' is not an initializer \(parameter\) of the model; did you mean 'fc1\.bias' or 'fc2\.bias'\?/,
  );
  // nothing close: the parameters only
  await rejectsWith(
    artifacts.generateArtifacts(MLP, { requiresGrad: ['encoder'], loss: 'CrossEntropyLoss' }),
    /requires_grad: 'encoder' is not an initializer \(parameter\) of the model \(parameters: fc1\.weight, fc1\.bias, fc2\.weight, fc2\.bias\)$/,
  );
});

// The MLP as a constant-folding export names its weights: PyTorch's made-up 'onnx::' names.
const folded = renamed(mlpBytes, [
  ['fc1.weight', 'onnx::M_11'],
  ['fc1.bias', 'onnx::A1'],
  ['fc2.weight', 'onnx::M_22'],
  ['fc2.bias', 'onnx::A2'],
]);

test('weights folded into anonymous constants: the error says how to export for training', async () => {
  await rejectsWith(
    artifacts.generateArtifacts(folded, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' }),
    new RegExp(`the model's 4 float initializers all have made-up names such as 'onnx::M_11': its weights were folded into anonymous constants \\(exported in eval mode or with constant folding\\?\\); export it for training: ${escape(EXPORT)}, or name the ones to train in requires_grad`),
  );
  await rejectsWith(
    artifacts.generateArtifacts(folded, { requiresGrad: ['fc1.weight'], loss: 'CrossEntropyLoss' }),
    new RegExp(`requires_grad: 'fc1\\.weight' is not an initializer .*\\(parameters: onnx::M_11, onnx::A1, onnx::M_22, onnx::A2\\); these are anonymous constants, not named weights: export it for training: ${escape(EXPORT)}`),
  );
  // naming them is a deliberate choice: it trains
  const art = await artifacts.generateArtifacts(folded, { requiresGrad: ['onnx::M_11', 'onnx::A1', 'onnx::M_22', 'onnx::A2'], loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  assert.ok(art.trainingModel.byteLength > 0);
});

test('InferenceSession.create and Module.create name the unsupported ops at create', async () => {
  const frob = renamed(mlpBytes, [['Relu', 'Frob']]);
  await rejectsWith(InferenceSession.create(frob), /cannot load model: webtrain does not support 1 op of this model: Frob \(ai\.onnx, opset 14; node '\/relu\/Frob'\)/);
  // the same model's training artifacts cannot even be generated: the message is the same
  await rejectsWith(artifacts.generateArtifacts(frob, { loss: 'CrossEntropyLoss' }), /webtrain does not support 1 op of this model: Frob/);
  // a training model with an op webtrain lacks fails at Module.create
  const art = await artifacts.generateArtifacts(MLP, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  try {
    await rejectsWith(Module.create(renamed(art.trainingModel, [['Relu', 'Frob']]), state), /webtrain does not support \d+ ops? of this model: .*Frob/);
  } finally {
    state.release();
  }
});
