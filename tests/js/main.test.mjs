// The main job (scripts/main.mjs, run by `npm start`), end to end as a child process without a
// TTY: it must exit 0, report accuracy before and after fine-tuning with after > before, write
// its files, and the exported model must score what it reports in onnxruntime-node too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CheckpointState, Module, Tensor } from '../../js/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const out = `${root}out/digits/`;
const demo = `${root}demo/models/digits/`;

function runMain() {
  return new Promise((resolve) => {
    execFile(process.execPath, ['scripts/main.mjs'], { cwd: root, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('the main job fine-tunes the digit classifier and improves accuracy', async () => {
  const { code, stdout, stderr } = await runMain();
  const log = `--- stdout\n${stdout}\n--- stderr\n${stderr}`;
  assert.equal(code, 0, `main.mjs exited ${code}\n${log}`);

  const before = stdout.match(/before fine-tuning: accuracy ([\d.]+)% \((\d+)\/(\d+)\)/);
  const after = stdout.match(/after fine-tuning: accuracy ([\d.]+)% \((\d+)\/(\d+)\)/);
  assert.ok(before && after, `accuracy before/after not reported\n${log}`);
  const [hitsBefore, hitsAfter, n] = [Number(before[2]), Number(after[2]), Number(after[3])];
  assert.ok(hitsAfter > hitsBefore, `accuracy did not improve: ${hitsBefore} -> ${hitsAfter} of ${n}`);
  assert.match(stdout, new RegExp(`accuracy on personal test set: ${before[1]}% -> ${after[1]}% \\(improved\\)`));

  // Non-TTY progress (fit's, on stderr): one line per epoch, with the loss and the accuracies; no carriage returns.
  const epochs = stderr.match(/^epoch \d \(\d\/8\) loss \d+\.\d{4} accuracy \d\.\d{4} valLoss \d+\.\d{4} valAccuracy \d\.\d{4} \d+\.\ds$/gm) ?? [];
  assert.equal(epochs.length, 8, `expected a progress line per epoch\n${log}`);
  assert.ok(!stdout.includes('\r') && !stderr.includes('\r'), 'carriage returns in non-TTY output');

  // The pretrained accuracy agrees with PyTorch's (meta.json, written by make_digits_model.py).
  const meta = JSON.parse(await readFile(`${demo}meta.json`, 'utf8'));
  assert.equal(n, meta.counts.personal_test);
  assert.equal(hitsBefore, Math.round(meta.pretrained_accuracy.personal_test * n), 'pretrained accuracy differs from PyTorch');

  for (const f of ['training_model.onnx', 'eval_model.onnx', 'optimizer_model.onnx', 'checkpoint', 'checkpoint.trained', 'digits-finetuned.onnx']) {
    const s = await stat(`${out}${f}`);
    assert.ok(s.isFile() && s.size > 0, `${f} missing or empty`);
  }

  // onnxruntime-node loads the exported model and reaches the reported accuracy.
  const ort = await import('onnxruntime-node');
  const session = await ort.InferenceSession.create(`${out}digits-finetuned.onnx`);
  const xb = await readFile(`${demo}${meta.files.personal_test_x.file}`);
  const yb = await readFile(`${demo}${meta.files.personal_test_y.file}`);
  const x = new Float32Array(xb.buffer.slice(xb.byteOffset, xb.byteOffset + xb.byteLength));
  const y = new Int32Array(yb.buffer.slice(yb.byteOffset, yb.byteOffset + yb.byteLength));
  const { output } = await session.run({ input: new ort.Tensor('float32', x, [n, 64]) });
  let hits = 0;
  for (let r = 0; r < n; r++) {
    const row = Array.from(output.data.subarray(r * 10, r * 10 + 10));
    if (row.indexOf(Math.max(...row)) === y[r]) hits++;
  }
  assert.equal(hits, hitsAfter, 'onnxruntime-node scores the exported model differently');

  // The saved checkpoint holds the fine-tuned parameters: the eval model with it scores the same.
  const state = await CheckpointState.loadCheckpoint(`${out}checkpoint.trained`);
  const module = await Module.create(`${out}training_model.onnx`, state, `${out}eval_model.onnx`);
  try {
    module.eval();
    const [, logits] = module.runAll(new Tensor('float32', x, [n, 64]), new Tensor('int32', y, [n]));
    let h = 0;
    for (let r = 0; r < n; r++) {
      const row = Array.from(logits.data.subarray(r * 10, r * 10 + 10));
      if (row.indexOf(Math.max(...row)) === y[r]) h++;
    }
    assert.equal(h, hitsAfter, 'the saved checkpoint does not reproduce the fine-tuned accuracy');
  } finally {
    module.release();
    state.release();
  }
});
