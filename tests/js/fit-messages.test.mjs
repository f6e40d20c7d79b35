// What fit says when its data is not what it expects, and how it numbers epochs: a plain
// Float32Array as x (one long sample axis) is told to become a Tensor with its dims; the
// progress line numbers epochs as the history, initialEpoch and the checkpoint's {epoch} do
// (from 0); a cross-entropy label -100 (PyTorch's default ignore index) names the loss's
// ignoreIndex option, which then skips those samples.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tensor, WebtrainError, fit } from '../../js/index.js';
import { mlpObjects, mlpInputs as x, mlpLabels as y } from './mlp.mjs';

let o;
before(async () => {
  o = await mlpObjects();
});
after(() => o?.release());

test('x as a plain Float32Array: wrap it in a Tensor with its dims', async () => {
  await assert.rejects(
    () => fit(o.module, o.optimizer, { x: new Float32Array(20 * 784), y: y(20) }),
    (err) => {
      assert.ok(err instanceof WebtrainError);
      assert.equal(err.message, 'fit: every input needs the same number of samples along axis 0; got 15680, 20; input #0 is a plain Float32Array (1-D: 15680 samples): wrap it in a Tensor with its dims, e.g. new Tensor(data, [20, 784])');
      return true;
    },
  );
});

test('the progress line numbers epochs as the history and the checkpoint path do', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'wt-epochs-'));
  try {
    const lines = [];
    const stream = { isTTY: false, write: (s) => lines.push(s.trim()) };
    const batches = [];
    const r = await fit(o.module, o.optimizer, {
      x: x(8), y: y(8), batchSize: 4, initialEpoch: 1, epochs: 3, progress: { stream },
      checkpoint: join(dir, 'ckpt-{epoch}'), callbacks: { onBatchEnd: (b) => void batches.push(b.epoch) },
    });
    assert.deepEqual(r.history.map((e) => e.epoch), [1, 2]);
    assert.deepEqual(batches, [1, 1, 2, 2]);
    assert.deepEqual((await readdir(dir)).sort(), ['ckpt-1', 'ckpt-2']);
    assert.equal(lines.length, 2);
    assert.match(lines[0], /^epoch 1 \(2\/3\) loss /);
    assert.match(lines[1], /^epoch 2 \(3\/3\) loss /);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a label -100 names the loss's ignoreIndex option, which skips it", async () => {
  const labels = new Tensor(Int32Array.from([1, -100, 3, 4]), [4]);
  assert.throws(
    () => o.module.train().run(x(4), labels),
    (err) =>
      err instanceof WebtrainError &&
      /labels\[1\] = -100 is out of range; expected 0 <= label < 10; to skip samples labelled -100 \(PyTorch's default ignore index\), generate the artifacts with the loss's ignoreIndex option: loss: \{ type: 'CrossEntropyLoss', ignoreIndex: -100 \}$/.test(err.message),
  );
  o.module.lazyResetGrad();
  const ignoring = await mlpObjects({ loss: { type: 'CrossEntropyLoss', ignoreIndex: -100 }, optimizer: 'AdamW' });
  try {
    const loss = ignoring.module.run(x(4), labels).data[0];
    assert.ok(Number.isFinite(loss));
  } finally {
    ignoring.release();
  }
});
