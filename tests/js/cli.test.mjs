// The `webtrain` command-line tool, run as a child process: generate-artifacts, inspect (model
// and checkpoint), export-inference (the exported model then runs in InferenceSession), help,
// version, and usage/runtime errors with their exit codes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckpointState, InferenceSession, Tensor } from '../../js/index.js';

const bin = fileURLToPath(new URL('../../js/bin/webtrain.mjs', import.meta.url));
const caseDir = fileURLToPath(new URL('../golden/cases/mlp_ce_adamw/', import.meta.url));
const model = join(caseDir, 'model.onnx');
let tmp;

function cli(args, env = {}) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, WEBTRAIN_DEBUG: '', ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function ok(args) {
  const r = cli(args);
  assert.equal(r.code, 0, `webtrain ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r;
}

async function evalInput() {
  const buf = await readFile(join(caseDir, 'eval__input.bin'));
  const x = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  return new Tensor('float32', x, [x.length / 784, 784]);
}

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'webtrain-cli-'));
});

after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

test('--help and --version', async () => {
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.equal(ok(['--version']).stdout, `webtrain ${pkg.version}\n`);
  assert.equal(ok(['-V']).stdout, `webtrain ${pkg.version}\n`);
  const help = ok(['--help']).stdout;
  for (const c of ['generate-artifacts', 'inspect', 'export-inference']) assert.match(help, new RegExp(c));
  assert.match(ok(['generate-artifacts', '--help']).stdout, /--requires-grad[\s\S]*--frozen[\s\S]*--loss[\s\S]*--optimizer/);
  assert.match(ok(['export-inference', '-h']).stdout, /--artifacts DIR[\s\S]*--checkpoint FILE[\s\S]*--outputs/);
  assert.match(ok(['help', 'inspect']).stdout, /Usage: webtrain inspect FILE/);
});

test('generate-artifacts, inspect, export-inference, then the exported model runs', async () => {
  const dir = join(tmp, 'art');
  const gen = ok(['generate-artifacts', model, '--requires-grad', 'fc2.weight,fc2.bias', '--frozen', 'fc1.weight', '--frozen', 'fc1.bias',
    '--loss', 'CrossEntropyLoss', '--optimizer=AdamW', '-o', dir]);
  for (const f of ['training_model.onnx', 'eval_model.onnx', 'optimizer_model.onnx', 'checkpoint']) {
    const s = await stat(join(dir, f));
    assert.ok(s.size > 0, f);
    assert.match(gen.stdout, new RegExp(`${f.replace('.', '\\.')}\\s+[\\d.]+ (B|KiB|MiB)\\n`), `generate output lists ${f} with its size`);
  }
  assert.match(gen.stdout, /wrote 4 files/);
  // Not a TTY: progress as plain lines on stderr.
  assert.match(gen.stderr, /^webtrain: generating artifacts from .*model\.onnx\.\.\.$/m);

  // inspect: the original model.
  const mi = JSON.parse(ok(['inspect', model, '--json']).stdout);
  assert.equal(mi.kind, 'model');
  assert.deepEqual(mi.inputs, [{ name: 'input', dtype: 'float32', shape: ['batch', 784] }]);
  assert.deepEqual(mi.outputs, [{ name: 'output', dtype: 'float32', shape: ['batch', 10] }]);
  assert.deepEqual(mi.ops, [{ op: 'Gemm', domain: 'ai.onnx', nodes: 2, webtrain: 'forward + gradient' }, { op: 'Relu', domain: 'ai.onnx', nodes: 1, webtrain: 'forward + gradient' }]);
  assert.equal(mi.parameterElements, 101770);
  assert.deepEqual(mi.opsets, { 'ai.onnx': 14 });
  const mt = ok(['inspect', model]).stdout;
  assert.match(mt, /inputs \(1\):\n\s+input\s+float32\s+\[batch, 784\]/);
  assert.match(mt, /ops \(2 types, 3 nodes\):/);

  // inspect: the training model shows the targets and the parameters as inputs.
  const ti = JSON.parse(ok(['inspect', join(dir, 'training_model.onnx'), '--json']).stdout);
  assert.deepEqual(ti.inputs.slice(0, 2), [{ name: 'input', dtype: 'float32', shape: ['batch', 784] }, { name: 'labels', dtype: 'int32', shape: ['batch'] }]);
  assert.equal(ti.outputs[0].name, 'loss');

  // inspect: the checkpoint (detected by content, whatever its name).
  const ci = JSON.parse(ok(['inspect', join(dir, 'checkpoint'), '--json']).stdout);
  assert.equal(ci.kind, 'checkpoint');
  const byName = Object.fromEntries(ci.parameters.map((p) => [p.name, p]));
  assert.deepEqual(byName['fc1.weight'], { name: 'fc1.weight', shape: [128, 784], elements: 100352, trainable: false });
  assert.deepEqual(byName['fc2.weight'], { name: 'fc2.weight', shape: [10, 128], elements: 1280, trainable: true });
  assert.equal(byName['fc2.bias'].trainable, true);
  assert.equal(byName['fc1.bias'].trainable, false);
  assert.equal(ci.trainableElements, 1290);
  assert.equal(ci.frozenElements, 100480);
  const ct = ok(['inspect', join(dir, 'checkpoint')]).stdout;
  assert.match(ct, /parameters \(4: 2 trainable, 2 frozen/);
  assert.match(ct, /fc1\.weight\s+\[128, 784\]\s+100,352\s+frozen/);
  assert.match(ct, /optimizer state: none/);
  assert.equal(ci.optimizerState, null);

  // A changed checkpoint (fc2.bias + 1, properties) saved under another name: inspect shows the
  // properties, and export-inference with --checkpoint uses its parameters.
  const state = await CheckpointState.loadCheckpoint(join(dir, 'checkpoint'));
  const bias = state.parameters.get('fc2.bias').data.map((v) => v + 1);
  state.parameters.set('fc2.bias', bias);
  state.properties.set('epoch', 3);
  state.properties.set('best_loss', 0.25);
  state.properties.set('note', 'fine-tuned');
  const changed = join(tmp, 'changed.ckpt');
  await CheckpointState.saveCheckpoint(state, changed);
  state.release();
  const pi = JSON.parse(ok(['inspect', changed, '--json']).stdout);
  assert.deepEqual(pi.properties, { epoch: 3, best_loss: 0.25, note: 'fine-tuned' });
  assert.match(ok(['inspect', changed]).stdout, /properties \(3\):[\s\S]*note\s+"fine-tuned"/);

  const out = join(tmp, 'inference.onnx');
  const ex = ok(['export-inference', '--artifacts', dir, '--checkpoint', changed, '--outputs', 'output', '-o', out]);
  assert.match(ex.stdout, /wrote .*inference\.onnx/);
  const ei = JSON.parse(ok(['inspect', out, '--json']).stdout);
  assert.deepEqual(ei.inputs, [{ name: 'input', dtype: 'float32', shape: ['batch', 784] }]);
  assert.deepEqual(ei.outputs.map((o) => o.name), ['output']);

  const x = await evalInput();
  const original = await InferenceSession.create(model);
  const exported = await InferenceSession.create(out);
  try {
    assert.deepEqual(exported.outputNames, ['output']);
    const a = (await original.run({ input: x })).output;
    const b = (await exported.run({ input: x })).output;
    assert.deepEqual(b.dims, a.dims);
    for (let i = 0; i < a.size; i++) assert.ok(Math.abs(b.data[i] - (a.data[i] + 1)) < 1e-4, `output[${i}]: ${b.data[i]} vs ${a.data[i]} + 1`);
  } finally {
    original.release();
    exported.release();
  }

  // Without --checkpoint: DIR/checkpoint, i.e. the original parameters.
  const out2 = join(tmp, 'inference2.onnx');
  ok(['export-inference', '--artifacts', dir, '--outputs', 'output', '-o', out2, '-q']);
  const s2 = await InferenceSession.create(out2);
  const o1 = await InferenceSession.create(model);
  try {
    const a = (await o1.run({ input: x })).output;
    const b = (await s2.run({ input: x })).output;
    for (let i = 0; i < a.size; i++) assert.ok(Math.abs(b.data[i] - a.data[i]) < 1e-5);
  } finally {
    s2.release();
    o1.release();
  }
});

test('--prefix, --nominal-checkpoint, loss none and no optimizer', async () => {
  const dir = join(tmp, 'prefixed');
  const r = ok(['generate-artifacts', model, '--loss', 'MSELoss', '--optimizer', 'SGD', '--prefix', 'mnist_', '--nominal-checkpoint', '-o', dir, '-q']);
  assert.equal(r.stderr, '', '-q: no progress');
  for (const f of ['training_model.onnx', 'eval_model.onnx', 'optimizer_model.onnx', 'checkpoint', 'nominal_checkpoint']) assert.ok(existsSync(join(dir, `mnist_${f}`)), f);
  assert.match(r.stdout, /wrote 5 files/);
  const out = join(tmp, 'prefixed.onnx');
  ok(['export-inference', '--artifacts', dir, '--prefix', 'mnist_', '--outputs', 'output', '-o', out, '-q']);
  assert.ok((await stat(out)).size > 400000);
  // Without a prefix the files are not found: a runtime error that says where it looked.
  const miss = cli(['export-inference', '--artifacts', dir, '--outputs', 'output', '-o', out]);
  assert.equal(miss.code, 1);
  assert.match(miss.stderr, /cannot read '.*prefixed\/training_model\.onnx': no such file/);

  // No optimizer: no optimizer model is written.
  const dir2 = join(tmp, 'noopt');
  const r2 = ok(['generate-artifacts', model, '--loss', 'CrossEntropyLoss', '-o', dir2, '-q']);
  assert.match(r2.stdout, /wrote 3 files/);
  assert.ok(!existsSync(join(dir2, 'optimizer_model.onnx')));

  // --loss none: the model's output is the loss; no target input is added.
  const dir3 = join(tmp, 'noloss');
  const scalarLoss = new URL('../data/scalar-loss.onnx', import.meta.url).pathname;
  ok(['generate-artifacts', scalarLoss, '--loss', 'none', '--optimizer', 'SGD', '-o', dir3, '-q']);
  const ti = JSON.parse(ok(['inspect', join(dir3, 'training_model.onnx'), '--json']).stdout);
  assert.equal(ti.outputs[0].name, 'loss');
  assert.ok(!ti.inputs.some((i) => i.name === 'labels' || i.name === 'target'));
  // ... and a model whose output is not a scalar is refused, with the reason.
  const r4 = cli(['generate-artifacts', model, '--loss', 'none', '-o', join(tmp, 'bad'), '-q']);
  assert.equal(r4.code, 1);
  assert.match(r4.stderr, /loss=None: the model's output 'output' must be a scalar float loss \(it is float \[batch,10\]\)/);
});

test('usage errors: exit code 2 and a message naming the problem', () => {
  const cases = [
    [[], /Usage: webtrain COMMAND/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['--frob'], /unknown option '--frob'/],
    [['inspect'], /missing argument FILE/],
    [['inspect', 'a', 'b'], /unexpected argument 'b'/],
    [['inspect', model, '--json=yes'], /option '--json' takes no value/],
    [['generate-artifacts'], /missing argument MODEL\.onnx/],
    [['generate-artifacts', model], /missing option -o DIR/],
    [['generate-artifacts', model, '-o'], /option '--output' needs a value/],
    [['generate-artifacts', model, '-o', tmp, '--loss', 'HingeLoss'], /'HingeLoss' is not one of MSELoss, CrossEntropyLoss/],
    [['generate-artifacts', model, '-o', tmp, '--optimizer', 'Adam'], /'Adam' is not one of AdamW, SGD/],
    [['generate-artifacts', model, '-o', tmp, '--los', 'MSELoss'], /unknown option '--los' \(did you mean '--loss'\?\)/],
    [['generate-artifacts', model, '-o', tmp, '--prefix', 'a', '--prefix', 'b'], /'--prefix' given twice/],
    [['export-inference', '-o', 'x.onnx', '--outputs', 'output'], /missing option --artifacts DIR/],
    [['export-inference', '--artifacts', tmp, '-o', 'x.onnx'], /missing option --outputs/],
    [['export-inference', '--artifacts', tmp, '--outputs', 'output'], /missing option -o FILE/],
  ];
  for (const [args, re] of cases) {
    const r = cli(args);
    assert.equal(r.code, 2, `webtrain ${args.join(' ')}: exit ${r.code}, stderr ${r.stderr}`);
    assert.match(r.stderr, re, `webtrain ${args.join(' ')}`);
    assert.equal(r.stdout, '');
  }
  assert.match(cli(['inspect']).stderr, /Run 'webtrain inspect --help' for usage/);
});

test('runtime errors: exit code 1, the core message, a stack trace only with WEBTRAIN_DEBUG=1', async () => {
  const notModel = join(caseDir, 'case.json');
  const r = cli(['inspect', notModel]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^webtrain: error: .*case\.json' is neither a webtrain checkpoint nor an ONNX model.*ModelProto/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  assert.match(cli(['inspect', join(tmp, 'missing.onnx')]).stderr, /cannot read '.*missing\.onnx': no such file/);
  assert.match(cli(['inspect', tmp]).stderr, /is a directory/);

  const bad = cli(['generate-artifacts', model, '--requires-grad', 'fc9.weight', '--loss', 'CrossEntropyLoss', '-o', join(tmp, 'bad')]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /webtrain: error: .*'fc9\.weight'/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /);
  assert.ok(!existsSync(join(tmp, 'bad', 'checkpoint')));

  const debug = cli(['generate-artifacts', model, '--requires-grad', 'fc9.weight', '-o', join(tmp, 'bad'), '-q'], { WEBTRAIN_DEBUG: '1' });
  assert.equal(debug.code, 1);
  assert.match(debug.stderr, /'fc9\.weight'[\s\S]*\n\s+at /);

  const dir = join(tmp, 'art-ok');
  ok(['generate-artifacts', model, '--loss', 'CrossEntropyLoss', '-o', dir, '-q']);
  const ex = cli(['export-inference', '--artifacts', dir, '--outputs', 'logits', '-o', join(tmp, 'x.onnx'), '-q']);
  assert.equal(ex.code, 1);
  assert.match(ex.stderr, /'logits' is not a value of the eval model/);
  assert.ok(!existsSync(join(tmp, 'x.onnx')));
});
