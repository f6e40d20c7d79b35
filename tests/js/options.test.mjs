// Options objects: a key no function documents (a typo) is a TypeError naming it and the nearest
// documented key, for every function that takes options, and for the option objects inside
// them (a loss, an optimizer, LoRA, fit's callbacks, earlyStopping, checkpoint, validation);
// the documented keys still pass. requiresGrad: [] (nothing to train) is an error saying what to
// do, except with LoRA, whose adapters train.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { artifacts, init, inspect, CheckpointState, Module, Optimizer, InferenceSession, fit, trainEpochs, onnxblock, WebtrainError } from '../../js/index.js';
import { closest } from '../../js/options.js';
import * as idb from '../../web/idb.js';
import { mlpModel as model, mlpObjects, mlpInputs, mlpLabels } from './mlp.mjs';

let o, art, state, module, optimizer;

before(async () => {
  o = await mlpObjects();
  ({ art, state, module, optimizer } = o);
});

after(() => o?.release());

/** fn() rejects (or throws) a TypeError whose message is exactly `message`. */
async function refuses(fn, message) {
  await assert.rejects(async () => fn(), (err) => {
    assert.ok(err instanceof TypeError, `expected a TypeError, got ${err?.name}: ${err?.message}`);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

const x = mlpInputs(4);
const y = mlpLabels(4);

test('the nearest known key: case, one or two edits; none for a word that is far', () => {
  const keys = ['requiresGrad', 'frozenParams', 'loss'];
  assert.equal(closest('requiresgrad', keys), 'requiresGrad');
  assert.equal(closest('requireGrad', keys), 'requiresGrad');
  assert.equal(closest('los', keys), 'loss');
  assert.equal(closest('batchSize', keys), null);
});

test('generateArtifacts: a misspelled option names the known one; nested loss, optimizer and lora options too', async () => {
  await refuses(() => artifacts.generateArtifacts(model, { requiresgrad: ['fc2.weight'], loss: 'CrossEntropyLoss' }), "unknown option 'requiresgrad' for generateArtifacts; did you mean 'requiresGrad'?");
  await refuses(() => artifacts.generateArtifacts(model, { loss: { type: 'CrossEntropyLoss', ignore_index: -100 } }), "unknown option 'ignore_index' for generateArtifacts' loss; did you mean 'ignoreIndex'?");
  await refuses(() => artifacts.generateArtifacts(model, { loss: 'CrossEntropyLoss', optimizer: { type: 'AdamW', weight_decay: 0 } }), "unknown option 'weight_decay' for generateArtifacts' optimizer; did you mean 'weightDecay'?");
  await refuses(() => artifacts.generateArtifacts(model, { loss: 'CrossEntropyLoss', lora: { rank: 4, target: ['fc1'] } }), "unknown option 'target' for generateArtifacts' lora; did you mean 'targets'?");
  // nothing near: the known keys are listed
  await refuses(() => artifacts.generateArtifacts(model, { loss: 'CrossEntropyLoss', batchSize: 4 }), /^unknown option 'batchSize' for generateArtifacts; the options are 'wasmBinary', .*'requiresGrad', .*'keepExternalData'$/);
});

test('init, loadCheckpoint, saveCheckpoint, toBytes, Module.create, Optimizer.create, InferenceSession.create, inspect, exports, buildModel', async () => {
  await refuses(() => init({ thread: 2 }), "unknown option 'thread' for init; did you mean 'threads'?");
  await refuses(() => CheckpointState.loadCheckpoint(art.checkpoint, { onprogress: () => {} }), "unknown option 'onprogress' for loadCheckpoint; did you mean 'onProgress'?");
  await refuses(() => CheckpointState.saveCheckpoint(state, null, { includeOptimizer: true }), "unknown option 'includeOptimizer' for saveCheckpoint; did you mean 'includeOptimizerState'?");
  await refuses(() => state.toBytes({ includeOptimizerStates: true }), "unknown option 'includeOptimizerStates' for toBytes; did you mean 'includeOptimizerState'?");
  await refuses(() => Module.create(art.trainingModel, state, art.evalModel, { externaldata: [] }), "unknown option 'externaldata' for Module.create; did you mean 'externalData'?");
  await refuses(() => Optimizer.create(art.optimizerModel, module, { externalDat: [] }), "unknown option 'externalDat' for Optimizer.create; did you mean 'externalData'?");
  await refuses(() => InferenceSession.create(model, { externalData: [], wasmURL: 'x' }), "unknown option 'wasmURL' for InferenceSession.create; did you mean 'wasmUrl'?");
  await refuses(() => inspect(model, { externaldata: [] }), "unknown option 'externaldata' for inspect; did you mean 'externalData'?");
  await refuses(() => module.exportModelForInferencing(['output'], { keepExternal: true }), "unknown option 'keepExternal' for exportModelForInferencing; did you mean 'keepExternalData'?");
  await refuses(() => onnxblock.buildModel(model, new onnxblock.blocks.ReduceMean(), { externaldata: [] }), "unknown option 'externaldata' for buildModel; did you mean 'externalData'?");
  await refuses(() => new onnxblock.blocks.ReduceMean({ keepDims: true }), "unknown option 'keepDims' for onnxblock.blocks.ReduceMean; did you mean 'keepdims'?");
  await refuses(() => new onnxblock.loss.CrossEntropyLoss({ ignoreindex: -1 }), "unknown option 'ignoreindex' for an onnxblock loss; did you mean 'ignoreIndex'?");
  new onnxblock.loss.CrossEntropyLoss({ reduction: 'sum', ignore_index: -1 }); // Python's names too
  // the documented keys pass
  const bytes = await CheckpointState.saveCheckpoint(state, null, { includeOptimizerState: true, externalData: false, trainableOnly: false });
  assert.ok(bytes.byteLength > 0);
  (await InferenceSession.create(model, { externalData: [] })).release();
  assert.equal((await inspect(model, { externalData: [] })).kind, 'model');
});

test('fit and trainEpochs: their options and the objects inside them', async () => {
  await refuses(() => fit(module, optimizer, { x, y, epoch: 2 }), "unknown option 'epoch' for fit; did you mean 'epochs'?");
  await refuses(() => fit(module, optimizer, { x, y, batchsize: 2 }), "unknown option 'batchsize' for fit; did you mean 'batchSize'?");
  await refuses(() => fit(module, optimizer, { x, y, callbacks: { onEpochEnds: () => {} } }), "unknown option 'onEpochEnds' for fit's callbacks; did you mean 'onEpochEnd'?");
  await refuses(() => fit(module, optimizer, { x, y, validation: { x, y }, earlyStopping: { patiance: 2 } }), "unknown option 'patiance' for fit's earlyStopping; did you mean 'patience'?");
  await refuses(() => fit(module, optimizer, { x, y, checkpoint: { path: '/tmp/x', includeOptimizer: false } }), "unknown option 'includeOptimizer' for fit's checkpoint; did you mean 'includeOptimizerState'?");
  await refuses(() => fit(module, optimizer, { x, y, validation: { x, labels: y } }), "unknown option 'labels' for fit's validation; the options are 'x', 'y'");
  await refuses(() => trainEpochs({ module, optimizer, inputs: [x, y], epoch: 1 }), "unknown option 'epoch' for trainEpochs; did you mean 'epochs'?");
  const r = await fit(module, optimizer, { x, y, batchSize: 4, epochs: 1, callbacks: { onBatchEnd: () => {} } });
  assert.equal(r.steps, 1);
});

test('requiresGrad: [] is an error saying what to do; with LoRA it trains the adapters', async () => {
  await assert.rejects(
    () => artifacts.generateArtifacts(model, { requiresGrad: [], loss: 'CrossEntropyLoss' }),
    (err) => err instanceof WebtrainError && /requiresGrad is empty, so nothing would be trained: leave requiresGrad out to train every float initializer, or name the parameters to train/.test(err.message),
  );
  const lora = await artifacts.generateArtifacts(model, { requiresGrad: [], loss: 'CrossEntropyLoss', lora: { rank: 2, targets: ['fc1'] } });
  const s = await CheckpointState.loadCheckpoint(lora.checkpoint);
  try {
    const trained = [...s.parameters.values()].filter((p) => p.requiresGrad).map((p) => p.name);
    assert.ok(trained.length > 0 && trained.every((n) => /lora/.test(n)), `trained: ${trained}`);
  } finally {
    s.release();
  }
});

test('idb.configure', () => {
  assert.throws(() => idb.configure({ databse: 'x' }), (err) => err instanceof TypeError && err.message === "unknown option 'databse' for idb.configure; did you mean 'database'?");
});
