// LoRA end to end on the tiny transformer golden case (q_proj/v_proj are MatMul through a
// Transpose of the PyTorch weight, head is a Gemm with transB): the adapters are the only
// trainable parameters; at initialization (B = 0) the eval model's logits are the base model's
// as onnxruntime-node computes them; training moves the adapters and nothing else; the merged
// export and the base model fed the adapters read back from the .onnx_adapter file (parsed here
// by ONNX Runtime's schema, independently of webtrain's reader) give webtrain's logits in
// onnxruntime-node; RegExp and function targets resolve to the same weights as names; bad
// options are errors naming the option and what to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { CheckpointState, Module, Optimizer, artifacts } from '../../js/index.js';
import { readCase, inputsOf } from '../golden/golden.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = join(root, 'tests/golden/cases/tiny_transformer_frozen_adamw/');
const modelPath = join(dir, 'model.onnx');
const LORA = { rank: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'head'], seed: 3 };
const ADAPTED = ['q_proj.weight', 'v_proj.weight', 'head.weight'];

const gen = (lora, extra = {}) =>
  artifacts.generateArtifacts(modelPath, { lora, loss: 'CrossEntropyLoss', optimizer: 'AdamW', additionalOutputNames: ['logits'], ...extra });

function close(what, got, want, rtol = 1e-4, atol = 1e-5) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++)
    assert.ok(Math.abs(got[i] - want[i]) <= atol + rtol * Math.abs(want[i]), `${what}[${i}]: ${got[i]} vs ${want[i]}`);
}

async function ortRun(bytes, feeds) {
  const s = await ort.InferenceSession.create(bytes, { logSeverityLevel: 3 });
  try {
    return { names: s.inputNames, out: await s.run(feeds) };
  } finally {
    await s.release();
  }
}

/** An .onnx_adapter file read by ONNX Runtime's schema (adapter_schema.fbs), by hand. */
function readAdapter(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  assert.equal(new TextDecoder().decode(bytes.subarray(4, 8)), 'TORT', 'file identifier');
  const table = (pos) => {
    const vt = pos - dv.getInt32(pos, true);
    const vtSize = dv.getUint16(vt, true);
    const field = (id) => (4 + 2 * id < vtSize ? dv.getUint16(vt + 4 + 2 * id, true) : 0);
    const ref = (id) => (field(id) ? pos + field(id) + dv.getUint32(pos + field(id), true) : 0);
    return {
      int: (id) => (field(id) ? dv.getInt32(pos + field(id), true) : 0),
      vec: (id) => { const p = ref(id); return p ? { pos: p + 4, n: dv.getUint32(p, true) } : { pos: 0, n: 0 }; },
    };
  };
  const rootT = table(dv.getUint32(0, true));
  const params = rootT.vec(3);
  const out = { format: rootT.int(0), adapterVersion: rootT.int(1), modelVersion: rootT.int(2), params: {} };
  for (let i = 0; i < params.n; i++) {
    const at = params.pos + 4 * i;
    const p = table(at + dv.getUint32(at, true));
    const name = p.vec(0);
    const dims = p.vec(1);
    const data = p.vec(3);
    assert.equal(data.pos % 8, 0, 'raw_data is 8-byte aligned (force_align: 8)');
    const key = new TextDecoder().decode(bytes.subarray(name.pos, name.pos + name.n));
    out.params[key] = {
      type: p.int(2),
      dims: Array.from({ length: dims.n }, (_, k) => Number(dv.getBigInt64(dims.pos + 8 * k, true))),
      data: new Float32Array(bytes.slice(data.pos, data.pos + data.n).buffer),
    };
  }
  return out;
}

test('LoRA trains the adapters only, and both exports run in onnxruntime-node as webtrain computes', async () => {
  const c = await readCase(dir);
  const art = await gen(LORA);
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  try {
    const trainable = [...state.parameters].filter(([, p]) => p.requiresGrad).map(([n]) => n).sort();
    assert.deepEqual(trainable, ADAPTED.flatMap((w) => [`${w}.lora_A`, `${w}.lora_B`]).sort());
    assert.ok(state.parameters.has('q_proj.bias') && !state.parameters.get('q_proj.bias').requiresGrad, 'a bias the substring matches stays frozen');
    const q = state.parameters.get('q_proj.weight');
    const qa = state.parameters.get('q_proj.weight.lora_A');
    const qb = state.parameters.get('q_proj.weight.lora_B');
    assert.deepEqual(qa.dims, [4, q.dims[1]]); // PyTorch Linear [out, in]: A [rank, in]
    assert.deepEqual(qb.dims, [q.dims[0], 4]);
    assert.ok(qb.data.every((v) => v === 0));
    const bound = 1 / Math.sqrt(q.dims[1]);
    assert.ok(qa.data.every((v) => Math.abs(v) <= bound) && qa.data.some((v) => Math.abs(v) > bound / 2));

    const evalIn = await inputsOf(dir, c.eval.inputs, module.eval().inputNames());
    const ids = evalIn[0];
    const idsOrt = new ort.Tensor('int64', ids.data, ids.dims);
    const base = (await ortRun(modelPath, { input_ids: idsOrt })).out.logits.data;
    close('logits at init vs the base model', module.runAll(...evalIn)[1].data, base, 1e-5, 1e-6);

    const qBefore = q.data;
    optimizer.setLearningRate(2e-2);
    const trainIn = await inputsOf(dir, c.steps[0].inputs, module.train().inputNames());
    const losses = [];
    for (let k = 0; k < 8; k++) {
      losses.push(module.runAll(...trainIn)[0].data[0]);
      optimizer.step();
      module.lazyResetGrad();
    }
    assert.ok(losses[7] < losses[0] * 0.9, `loss falls: ${losses}`);
    assert.deepEqual(state.parameters.get('q_proj.weight').data, qBefore, 'the base weight is frozen');
    assert.ok(state.parameters.get('q_proj.weight.lora_B').data.some((v) => v !== 0));

    const logits = module.eval().runAll(...evalIn)[1].data;
    const merged = await module.exportMergedModel(['logits']);
    const m = await ortRun(merged, { input_ids: idsOrt });
    assert.deepEqual(m.names, ['input_ids']);
    close('merged model in onnxruntime-node vs webtrain', m.out.logits.data, logits);

    const { model, adapter } = await module.exportLoraAdapter(['logits'], { adapterVersion: 2, modelVersion: 5 });
    const a = readAdapter(adapter);
    assert.deepEqual([a.format, a.adapterVersion, a.modelVersion], [1, 2, 5]);
    assert.deepEqual(Object.keys(a.params).sort(), trainable);
    const feeds = { input_ids: idsOrt };
    for (const [name, p] of Object.entries(a.params)) {
      assert.equal(p.type, 1);
      const sp = state.parameters.get(name);
      assert.deepEqual(p.dims, sp.dims);
      assert.deepEqual(p.data, sp.data);
      feeds[name] = new ort.Tensor('float32', p.data, p.dims);
    }
    const withAdapters = await ortRun(model, feeds);
    assert.deepEqual([...withAdapters.names].sort(), ['input_ids', ...trainable].sort());
    assert.ok(m.out.logits.data.some((v, i) => Math.abs(v - base[i]) > 1e-3), 'the trained adapters change the logits');
    close('base model + adapter inputs vs the merged model', withAdapters.out.logits.data, m.out.logits.data);
    // no adapter: zero-rank tensors ([0, in] and [out, 0]) give the base model
    const none = { input_ids: idsOrt };
    for (const [name, p] of Object.entries(a.params)) {
      const dims = name.endsWith('.lora_A') ? [0, p.dims[1]] : [p.dims[0], 0];
      none[name] = new ort.Tensor('float32', new Float32Array(0), dims);
    }
    const without = await ortRun(model, none);
    close('base model without adapters vs the base', without.out.logits.data, base, 1e-5, 1e-6);
  } finally {
    optimizer.release();
    module.release();
    state.release();
  }
});

test('LoRA targets: RegExp and functions pick the same weights as name parts; seeded', async () => {
  const byName = await gen({ rank: 2, targets: ['q_proj', 'v_proj'], seed: 9 });
  const byRegExp = await gen({ rank: 2, targets: [/^(q|v)_proj\./], seed: 9 });
  const byFn = await gen({ rank: 2, targets: [(n) => n === 'v_proj.weight', 'q_proj'], seed: 9 });
  assert.deepEqual(byRegExp.checkpoint, byName.checkpoint);
  assert.deepEqual(byFn.checkpoint, byName.checkpoint);
  const other = await gen({ rank: 2, targets: ['q_proj', 'v_proj'], seed: 10 });
  assert.notDeepEqual(other.checkpoint, byName.checkpoint);
  // requiresGrad trains beside the adapters
  const withHead = await gen({ rank: 2, targets: 'q_proj' }, { requiresGrad: ['head.bias'] });
  const s = await CheckpointState.loadCheckpoint(withHead.checkpoint);
  try {
    const trainable = [...s.parameters].filter(([, p]) => p.requiresGrad).map(([n]) => n).sort();
    assert.deepEqual(trainable, ['head.bias', 'q_proj.weight.lora_A', 'q_proj.weight.lora_B']);
  } finally {
    s.release();
  }
});

test('bad LoRA options are errors naming the option, the target or the weight', async () => {
  const cases = [
    [{ rank: 0, targets: ['q_proj'] }, /lora\.rank: expected an integer from 1 to 65536.*got 0/],
    [{ rank: 2.5, targets: ['q_proj'] }, /lora\.rank: .*got 2\.5/],
    [{ rank: 4, alpha: -1, targets: ['q_proj'] }, /lora\.alpha: expected a finite number > 0.*got -1/],
    [{ rank: 4, alpha: NaN, targets: ['q_proj'] }, /lora\.alpha/],
    [{ rank: 4, targets: [] }, /lora\.targets: expected weight name parts/],
    [{ rank: 4 }, /lora\.targets: expected/],
    [{ rank: 4, targets: [''] }, /lora\.targets\[0\]: expected a non-empty string/],
    [{ rank: 4, targets: [42] }, /lora\.targets\[0\]: .*got 42/],
    [{ rank: 4, targets: ['q_proj'], seed: -1 }, /lora\.seed/],
    ['q_proj', /lora: expected an object \{ rank, alpha, targets, seed\? \}/],
    [{ rank: 4, targets: ['nope'] }, /target 'nope' matches no weight of the model/],
    [{ rank: 4, targets: ['tok_emb'] }, /target 'tok_emb' matches no MatMul\/Gemm weight \(it matches 'tok_emb.weight', which no MatMul or Gemm multiplies by\)/],
    [{ rank: 4, targets: ['q_proj.bias'] }, /target 'q_proj.bias' matches no MatMul\/Gemm weight/],
    [{ rank: 4, targets: [/nope/] }, /lora\.targets\[0\] \(\/nope\/\) matches none of the model's \d+ MatMul\/Gemm weights \(such as '/],
    [{ rank: 4, targets: [() => { throw new Error('boom'); }] }, /lora\.targets\[0\] \(function .*\) threw on weight '.*': boom/],
  ];
  for (const [lora, re] of cases) await assert.rejects(gen(lora), re, JSON.stringify(String(lora.targets ?? lora)));
  await assert.rejects(gen({ rank: 4, targets: ['q_proj'] }, { requiresGrad: ['q_proj.weight'] }), /'q_proj.weight' is listed in requires_grad and is a LoRA target/);
  // exports of a module without adapters
  const plain = await artifacts.generateArtifacts(modelPath, { loss: 'CrossEntropyLoss', optimizer: 'AdamW' });
  const state = await CheckpointState.loadCheckpoint(plain.checkpoint);
  const module = await Module.create(plain.trainingModel, state, plain.evalModel);
  try {
    await assert.rejects(module.exportMergedModel(['logits']), /no LoRA adapters .*generate the artifacts with the lora option/);
    await assert.rejects(module.exportLoraAdapter(['logits']), /no LoRA adapters/);
    await assert.rejects(module.exportMergedModel([]), /exportMergedModel: give the output names/);
  } finally {
    module.release();
    state.release();
  }
});

test('the CLI: generate-artifacts --lora-*, export-inference --lora merged | adapter; bad values are usage errors', async () => {
  const { spawnSync } = await import('node:child_process');
  const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const bin = join(root, 'js/bin/webtrain.mjs');
  const cli = (args) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, WEBTRAIN_DEBUG: '' } });
  const tmp = mkdtempSync(join(tmpdir(), 'webtrain-lora-cli-'));
  try {
    let r = cli(['generate-artifacts', modelPath, '-o', tmp, '-q', '--loss', 'CrossEntropyLoss', '--optimizer', 'AdamW',
      '--lora-rank', '2', '--lora-alpha', '4', '--lora-targets', '/^q_proj\\.weight$/,v_proj', '--lora-seed', '9']);
    assert.equal(r.status, 0, r.stderr);
    const same = await gen({ rank: 2, alpha: 4, targets: ['q_proj', 'v_proj'], seed: 9 }, { additionalOutputNames: undefined });
    assert.deepEqual(new Uint8Array(readFileSync(join(tmp, 'checkpoint'))), same.checkpoint);
    r = cli(['export-inference', '--artifacts', tmp, '--outputs', 'logits', '-o', join(tmp, 'merged.onnx'), '--lora', 'merged', '-q']);
    assert.equal(r.status, 0, r.stderr);
    r = cli(['export-inference', '--artifacts', tmp, '--outputs', 'logits', '-o', join(tmp, 'base.onnx'), '--lora', 'adapter', '-q']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /base\.onnx_adapter/);
    const a = readAdapter(new Uint8Array(readFileSync(join(tmp, 'base.onnx_adapter'))));
    assert.deepEqual(Object.keys(a.params).sort(), ['q_proj.weight.lora_A', 'q_proj.weight.lora_B', 'v_proj.weight.lora_A', 'v_proj.weight.lora_B']);
    // at initialization the merged model is the base model
    const ids = new ort.Tensor('int64', BigInt64Array.from({ length: 24 }, (_, i) => BigInt(i % 7)), [2, 12]);
    const base = (await ortRun(modelPath, { input_ids: ids })).out.logits.data;
    close('merged at init vs base', (await ortRun(join(tmp, 'merged.onnx'), { input_ids: ids })).out.logits.data, base, 1e-6, 1e-6);
    for (const [args, re] of [
      [['--lora-rank', 'x', '--lora-targets', 'q_proj'], /option '--lora-rank': expected an integer; got 'x'/],
      [['--lora-targets', 'q_proj'], /missing option --lora-rank N/],
      [['--lora-rank', '4'], /missing option --lora-targets NAMES/],
      [['--lora-rank', '4', '--lora-targets', '/(/'], /'\/\(\/' is not a valid regular expression/],
    ]) {
      r = cli(['generate-artifacts', modelPath, '-o', tmp, '-q', '--loss', 'CrossEntropyLoss', ...args]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, re);
    }
    r = cli(['generate-artifacts', modelPath, '-o', tmp, '-q', '--loss', 'CrossEntropyLoss', '--lora-rank', '0', '--lora-targets', 'q_proj']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /lora\.rank: expected an integer from 1 to 65536/);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('adapters save on their own (trainableOnly) and load back into a state of the same base only', async () => {
  const c = await readCase(dir);
  const art = await gen(LORA);
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  const fresh = await CheckpointState.loadCheckpoint(art.checkpoint);
  const other = await CheckpointState.loadCheckpoint(art.checkpoint);
  const rank2 = await CheckpointState.loadCheckpoint((await gen({ ...LORA, rank: 2 })).checkpoint);
  try {
    optimizer.setLearningRate(2e-2);
    const trainIn = await inputsOf(dir, c.steps[0].inputs, module.train().inputNames());
    for (let k = 0; k < 3; k++) {
      module.runAll(...trainIn);
      optimizer.step();
      module.lazyResetGrad();
    }
    state.properties.set('epoch', 3);
    const small = await CheckpointState.saveCheckpoint(state, null, { trainableOnly: true });
    const full = await CheckpointState.saveCheckpoint(state);
    assert.ok(small.byteLength * 3 < full.byteLength, `${small.byteLength} vs ${full.byteLength} bytes`);
    const names = [...state.parameters].filter(([, p]) => p.requiresGrad).map(([n]) => n);
    await fresh.loadParameters(small);
    for (const n of names) assert.deepEqual(fresh.parameters.get(n).data, state.parameters.get(n).data, n);
    assert.equal(fresh.properties.get('epoch'), 3);
    // the loaded adapters give the trained module's outputs
    const m2 = await Module.create(art.trainingModel, fresh, art.evalModel);
    try {
      const evalIn = await inputsOf(dir, c.eval.inputs, module.eval().inputNames());
      assert.deepEqual(m2.eval().runAll(...evalIn)[1].data, module.runAll(...evalIn)[1].data);
    } finally {
      m2.release();
    }
    // an .onnx_adapter file loads the same way (names and shapes checked)
    const { adapter } = await module.exportLoraAdapter(['logits']);
    const viaAdapter = await CheckpointState.loadCheckpoint(art.checkpoint);
    try {
      await viaAdapter.loadParameters(adapter);
      for (const n of names) assert.deepEqual(viaAdapter.parameters.get(n).data, state.parameters.get(n).data, n);
      await assert.rejects(rank2.loadParameters(adapter), /parameter '.*lora_[AB]' is float \[\d+,\d+\] in the checkpoint but float \[\d+,\d+\] in this state/);
      await assert.rejects(viaAdapter.loadParameters(adapter.slice(0, 100)), /adapter/);
    } finally {
      viaAdapter.release();
    }
    // with the optimizer state too: still loads (parameters and properties)
    await fresh.loadParameters(await CheckpointState.saveCheckpoint(state, null, { trainableOnly: true, includeOptimizerState: true }));

    // another base: one frozen weight differs
    const w = other.parameters.get('ff1.weight').data;
    w[0] += 1;
    other.parameters.set('ff1.weight', w);
    const before = other.parameters.get('q_proj.weight.lora_A').data;
    await assert.rejects(other.loadParameters(small), /trained on another base model: its frozen parameters' fingerprint is [0-9a-f]{16}, this state's [0-9a-f]{16}/);
    assert.deepEqual(other.parameters.get('q_proj.weight.lora_A').data, before, 'nothing loaded on error');
    await assert.rejects(rank2.loadParameters(small), /parameter '.*lora_[AB]' is float \[\d+,\d+\] in the checkpoint but float \[\d+,\d+\] in this state: it was trained on a different base model or with another LoRA rank/);
    const plain = await CheckpointState.loadCheckpoint((await artifacts.generateArtifacts(modelPath, { loss: 'CrossEntropyLoss' })).checkpoint);
    try {
      await assert.rejects(plain.loadParameters(small), /parameter '.*lora_[AB]' of the checkpoint is not a parameter of this state/);
    } finally {
      plain.release();
    }
    await assert.rejects(fresh.loadParameters(new Uint8Array(10)), /checkpoint/);
  } finally {
    optimizer.release();
    module.release();
    state.release();
    fresh.release();
    other.release();
    rank2.release();
  }
});

test('LoRA on a float16 frozen base (frozenDtype): trains, and both exports run in onnxruntime-node', async () => {
  const c = await readCase(dir);
  const art = await gen(LORA, { frozenDtype: 'float16' });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const optimizer = await Optimizer.create(art.optimizerModel, module);
  try {
    // the adapted weights are float16 now (q_proj's stored transposed under its Transpose's name)
    assert.ok(!art.keptFloat32?.some((k) => ADAPTED.includes(k.name)), 'the adapted weights became float16');
    optimizer.setLearningRate(2e-2);
    const trainIn = await inputsOf(dir, c.steps[0].inputs, module.train().inputNames());
    const losses = [];
    for (let k = 0; k < 5; k++) {
      losses.push(module.runAll(...trainIn)[0].data[0]);
      optimizer.step();
      module.lazyResetGrad();
    }
    assert.ok(losses[4] < losses[0], `loss falls: ${losses}`);
    const evalIn = await inputsOf(dir, c.eval.inputs, module.eval().inputNames());
    const logits = module.runAll(...evalIn)[1].data;
    const idsOrt = new ort.Tensor('int64', evalIn[0].data, evalIn[0].dims);
    // merged: W + delta rounded to float16 once
    const merged = (await ortRun(await module.exportMergedModel(['logits']), { input_ids: idsOrt })).out.logits.data;
    close('merged float16 model vs webtrain', merged, logits, 1e-2, 2e-3);
    // base + adapters: the same arithmetic as webtrain's eval model
    const { model, adapter } = await module.exportLoraAdapter(['logits']);
    const feeds = { input_ids: idsOrt };
    for (const [name, p] of Object.entries(readAdapter(adapter).params)) feeds[name] = new ort.Tensor('float32', p.data, p.dims);
    close('float16 base + adapters vs webtrain', (await ortRun(model, feeds)).out.logits.data, logits);
  } finally {
    optimizer.release();
    module.release();
    state.release();
  }
});

test("ONNX's checker (python3-onnx, full check) accepts the LoRA eval, merged and adapter-input models", async (t) => {
  const { spawnSync } = await import('node:child_process');
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  if (spawnSync('/usr/bin/python3', ['-c', 'import onnx']).status !== 0) return t.skip('python3-onnx is not installed (apt-get install python3-onnx)');
  const art = await gen({ rank: 4, targets: ['proj'] }, { additionalOutputNames: undefined });
  const state = await CheckpointState.loadCheckpoint(art.checkpoint);
  const module = await Module.create(art.trainingModel, state, art.evalModel);
  const tmp = mkdtempSync(join(tmpdir(), 'webtrain-lora-check-'));
  try {
    const files = { eval: art.evalModel, merged: await module.exportMergedModel(['logits']), base: (await module.exportLoraAdapter(['logits'])).model };
    for (const [k, v] of Object.entries(files)) writeFileSync(join(tmp, `${k}.onnx`), v);
    const py = `import onnx, sys\nfor f in sys.argv[1:]:\n    onnx.checker.check_model(onnx.load(f), full_check=True)\nprint("ok")`;
    const r = spawnSync('/usr/bin/python3', ['-c', py, ...Object.keys(files).map((k) => join(tmp, `${k}.onnx`))], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    module.release();
    state.release();
  }
});
