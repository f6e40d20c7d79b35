// Bad external data, from every entry point that reads a model: locations outside the model's
// folder, offsets past the side file's end, missing side files, externalData entries the model
// does not reference, and option values of the wrong type. Each is an error naming the tensor
// and the file and what to do; after each, the same call with good input works (nothing is
// left half built). Test models: tests/data/external/make.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InferenceSession, CheckpointState, Module, artifacts, onnxblock } from '../../js/index.js';

const dir = fileURLToPath(new URL('../data/external/', import.meta.url));
const file = (name) => join(dir, name);

// Every entry point, as (model, options) -> Promise.
const entries = {
  'InferenceSession.create': (model, options) => InferenceSession.create(model, options).then((s) => s.release()),
  generateArtifacts: (model, options) => artifacts.generateArtifacts(model, { loss: 'CrossEntropyLoss', ...options }),
  'Module.create': async (model, options) => {
    // the model as a training model: Module.create parses it (external data and all) before it
    // finds that it is no training model
    const art = await artifacts.generateArtifacts(file('mlp-embedded.onnx'), { loss: 'CrossEntropyLoss' });
    const state = await CheckpointState.loadCheckpoint(art.checkpoint);
    try {
      (await Module.create(model, state, undefined, options)).release();
    } catch (e) {
      // parsed, external data and all, then refused as no training model: the read worked
      if (!/has no gradient accumulation inputs/.test(e.message)) throw e;
    } finally {
      state.release();
    }
  },
};

const sideData = () => readFile(file('mlp.onnx.data'));

// buildModel parses its base like any model (a head on a base saved with external data)
entries['onnxblock.buildModel'] = (model, options) => onnxblock.buildModel(model, new Doubled(), options);
class Doubled extends onnxblock.Block {
  constructor() {
    super();
    this._add = new onnxblock.blocks.Add();
  }
  build(x) {
    return this._add(x, x);
  }
}

for (const [name, call] of Object.entries(entries)) {
  test(`${name}: a location outside the model's folder`, async () => {
    await assert.rejects(call(file('bad-dotdot.onnx')), /tensor 'W1': external data location '\.\.\/mlp\.onnx\.data' must be a relative path inside the model's directory/);
    await assert.rejects(call(file('bad-absolute.onnx')), /tensor 'W1': external data location '\/etc\/passwd' must be a relative path inside the model's directory/);
    // also with externalData given: the location is checked before any entry is matched
    await assert.rejects(call(await readFile(file('bad-dotdot.onnx')), { externalData: [{ path: '../mlp.onnx.data', data: await sideData() }] }), /must be a relative path inside the model's directory/);
  });

  test(`${name}: an offset past the side file's end`, async () => {
    await assert.rejects(call(file('bad-offset.onnx')), /tensor 'W2': external data file '.*mlp\.onnx\.data' has 268 bytes, but the tensor's 96 bytes at offset 4096 run past its end/);
    const blob = new Blob([await sideData()]);
    await assert.rejects(call(await readFile(file('bad-offset.onnx')), { externalData: [{ path: 'mlp.onnx.data', data: blob }] }), /tensor 'W2': externalData 'mlp\.onnx\.data' has 268 bytes, but the tensor's 96 bytes at offset 4096 run past its end/);
    // a side file shorter than the model says
    const short = (await sideData()).subarray(0, 200);
    await assert.rejects(call(await readFile(file('mlp.onnx')), { externalData: [{ path: 'mlp.onnx.data', data: short }] }), /tensor 'W2': externalData 'mlp\.onnx\.data' has 200 bytes, but the tensor's 96 bytes at offset 160 run past its end/);
  });

  test(`${name}: a missing side file names the tensor, the file and the option`, async () => {
    await assert.rejects(call(file('missing.onnx')), /tensor 'W1': cannot read external data file '.*missing\.onnx\.data': no such file \(side files are looked for beside the model\): put it there or pass it with externalData: \[\{ path: 'missing\.onnx\.data', data \}\]/);
    await assert.rejects(call(await readFile(file('mlp.onnx'))), /tensor 'W1': external file 'mlp\.onnx\.data' is not available: the model was given as bytes .*pass it with externalData: \[\{ path: 'mlp\.onnx\.data', data \}\]/);
    await assert.rejects(call(await readFile(file('mlp.onnx')), { externalData: [{ path: 'mlp.onnx.data', data: file('nowhere.data') }] }), /tensor 'W1': cannot read externalData 'mlp\.onnx\.data' '.*nowhere\.data': no such file/);
    await call(file('mlp.onnx')); // and then the good model loads
  });

  test(`${name}: an externalData entry the model does not reference`, async () => {
    await assert.rejects(call(file('mlp.onnx'), { externalData: [{ path: 'mlp.data', data: await sideData() }] }), /externalData 'mlp\.data' is not referenced by the model \(its tensors are stored in 'mlp\.onnx\.data'\): check the path/);
    await assert.rejects(call(file('mlp-embedded.onnx'), { externalData: [{ path: 'x.data', data: new Uint8Array(4) }] }), /externalData 'x\.data' is not referenced by the model \(it stores no tensor externally\)/);
  });

  test(`${name}: externalData of the wrong type is a TypeError`, async () => {
    const model = file('mlp.onnx');
    await assert.rejects(call(model, { externalData: { path: 'mlp.onnx.data' } }), (e) => e instanceof TypeError && /externalData: expected an array of \{ path, data \}; got a plain object/.test(e.message));
    await assert.rejects(call(model, { externalData: [{ path: 'mlp.onnx.data', data: 42 }] }), (e) => e instanceof TypeError && /externalData\[0\] \('mlp\.onnx\.data'\)\.data: expected a Uint8Array, ArrayBuffer, Blob, File, URL or path; got a number \(42\)/.test(e.message));
    await assert.rejects(call(model, { externalData: [{ data: new Uint8Array(1) }] }), (e) => e instanceof TypeError && /externalData\[0\]\.path: expected the file name/.test(e.message));
    await assert.rejects(call(model, { externalData: [null] }), (e) => e instanceof TypeError && /externalData\[0\]: expected \{ path, data \}; got null/.test(e.message));
    const data = await sideData();
    await assert.rejects(call(model, { externalData: [{ path: 'mlp.onnx.data', data }, { path: './mlp.onnx.data', data }] }), /externalData\[1\]: '\.\/mlp\.onnx\.data' is given twice/);
  });
}
