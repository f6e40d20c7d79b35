// Every golden case (tests/golden/cases/*, format: tests/golden/FORMAT.md) trained through the
// public JS API and checked against PyTorch at the case's tolerances: losses, gradients,
// parameters after every step, BatchNorm buffers, gradient accumulation, eval loss, inference
// outputs of the exported model. two_output_custom_loss uses the seed's WeightedAverageLoss
// onnxblock example translated to JS (tests/golden/golden.mjs: customLoss).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { runCase, customLoss, readCase } from '../golden/golden.mjs';
import { onnxblock } from '../../js/index.js';

const casesDir = fileURLToPath(new URL('../golden/cases/', import.meta.url));
const cases = readdirSync(casesDir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(casesDir, d.name, 'case.json')))
  .map((d) => d.name)
  .sort();

test('the public golden cases are all present', () => {
  for (const name of ['cnn_bn_ce_sgd', 'mlp_adamw_ort_defaults', 'mlp_ce_adamw', 'multilabel_bce', 'regression_l1_sgd', 'regression_mse_adamw', 'tiny_transformer_frozen_adamw', 'two_output_custom_loss'])
    assert.ok(cases.includes(name), `missing case ${name}`);
});

for (const name of cases) {
  test(`golden case ${name}`, async () => {
    const r = await runCase(join(casesDir, name));
    assert.ok(Number.isFinite(r.evalLoss));
  });
}

test('the custom loss is an onnxblock.Block subclass, called with the model outputs', async () => {
  const c = await readCase(join(casesDir, 'two_output_custom_loss'));
  const l = customLoss(c.loss);
  assert.ok(l instanceof onnxblock.Block);
  assert.equal(typeof l, 'function');
  // Outside generateArtifacts a block has no model to add nodes to.
  assert.throws(() => l('out1', 'out2'), /only while artifacts\.generateArtifacts builds the loss/);
});
