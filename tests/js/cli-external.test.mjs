// The `webtrain` CLI on a model saved with external data: its side file is read from beside the
// model path by generate-artifacts and inspect, export-inference works on the artifacts, and a
// missing side file or a location outside the model's folder is a runtime error (exit 1) naming
// the tensor and the file. Test models: tests/data/external/make.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InferenceSession, Tensor } from '../../js/index.js';

const bin = fileURLToPath(new URL('../../js/bin/webtrain.mjs', import.meta.url));
const dir = fileURLToPath(new URL('../data/external/', import.meta.url));

function cli(args) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, WEBTRAIN_DEBUG: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('generate-artifacts, inspect and export-inference on a model with a side file', async (t) => {
  const tmp = await mkdtemp(join(tmpdir(), 'webtrain-cli-ext-'));
  t.after(() => rm(tmp, { recursive: true, force: true }));
  const runs = {};
  for (const name of ['mlp.onnx', 'mlp-embedded.onnx']) {
    const out = join(tmp, name);
    const gen = cli(['generate-artifacts', join(dir, name), '--loss', 'CrossEntropyLoss', '--optimizer', 'AdamW', '-o', out, '-q']);
    assert.equal(gen.code, 0, gen.stderr);
    const exp = cli(['export-inference', '--artifacts', out, '--outputs', 'logits', '-o', join(out, 'inference.onnx'), '-q']);
    assert.equal(exp.code, 0, exp.stderr);
    runs[name] = { checkpoint: await readFile(join(out, 'checkpoint')), inference: await readFile(join(out, 'inference.onnx')) };
  }
  // the same artifacts as from the model with its weights inside
  assert.deepEqual(runs['mlp.onnx'].checkpoint, runs['mlp-embedded.onnx'].checkpoint);
  assert.deepEqual(runs['mlp.onnx'].inference, runs['mlp-embedded.onnx'].inference);
  const s = await InferenceSession.create(runs['mlp.onnx'].inference);
  assert.deepEqual((await s.run({ X: new Tensor('float32', new Float32Array(8).fill(1), [2, 4]) })).logits.dims, [2, 3]);
  s.release();
  const info = cli(['inspect', join(dir, 'mlp.onnx'), '--json']);
  assert.equal(info.code, 0, info.stderr);
  const j = JSON.parse(info.stdout);
  assert.deepEqual(j.initializers.map((i) => i.name), ['W1', 'B1', 'W2', 'B2']);
});

test('a missing side file and a location outside the folder are errors naming the tensor and file', () => {
  const missing = cli(['generate-artifacts', join(dir, 'missing.onnx'), '-o', join(tmpdir(), 'webtrain-cli-ext-never'), '-q']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^webtrain: error: generate_artifacts: tensor 'W1': cannot read external data file '.*missing\.onnx\.data': no such file \(side files are looked for beside the model\)/);
  const inspect = cli(['inspect', join(dir, 'bad-dotdot.onnx')]);
  assert.equal(inspect.code, 1);
  assert.match(inspect.stderr, /tensor 'W1': external data location '\.\.\/mlp\.onnx\.data' must be a relative path inside the model's directory/);
  const offset = cli(['inspect', join(dir, 'bad-offset.onnx')]);
  assert.equal(offset.code, 1);
  assert.match(offset.stderr, /tensor 'W2': external data file '.*mlp\.onnx\.data' has 268 bytes, but the tensor's 96 bytes at offset 4096 run past its end/);
});
