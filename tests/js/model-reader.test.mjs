// The core's reader is the only protobuf reader: no JavaScript source walks varints or tags, and
// generateArtifacts moves a model into the wasm heap once, whatever it is given with (side files
// in externalData, weights inside read by reference), counted at the copies themselves: every
// Uint8Array.set into the wasm memory from the model's bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { artifacts, init } from '../../js/index.js';

const root = new URL('../../', import.meta.url);

/** Every .js / .mjs file under a folder of the package. */
async function sources(dir) {
  const out = [];
  for (const e of await readdir(new URL(dir, root), { withFileTypes: true, recursive: true })) {
    if (e.isFile() && /\.m?js$/.test(e.name)) out.push(`${(e.parentPath ?? e.path).replace(/\/$/, '')}/${e.name}`);
  }
  return out;
}

test('no JavaScript source reads the protobuf wire format', async () => {
  // what a varint or tag walker cannot do without: a 7-bit payload mask, a field number shifted
  // out of or into a tag, a wire type compared
  const walker = [/&\s*0x7f\b/, /\b\w+\s*>>>?\s*3\b/, /<<\s*3\)\s*\|/, /\bvarint/i, /\bwire\s*===?\s*[0-5]\b/];
  const found = [];
  for (const file of [...(await sources('js/')), ...(await sources('web/'))]) {
    const text = await readFile(file, 'utf8');
    text.split('\n').forEach((line, i) => {
      if (walker.some((re) => re.test(line))) found.push(`${file.slice(new URL(root).pathname.length)}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, [], 'protobuf is read by the core (src/io/onnx_scan.c, onnx_record.c), not in JavaScript');
});

/** Bytes generateArtifacts copies from `model` into the wasm memory. */
async function copiedIn(model, options) {
  const core = await init();
  const set = Uint8Array.prototype.set;
  let copied = 0;
  Uint8Array.prototype.set = function (src, offset) {
    if (src?.buffer === model.buffer && this.buffer === core.m.HEAPU8.buffer) copied += src.byteLength;
    return set.call(this, src, offset);
  };
  try {
    const art = await artifacts.generateArtifacts(model, options);
    assert.ok(art.trainingModel.byteLength > 0 && art.checkpoint.byteLength > 0);
  } finally {
    Uint8Array.prototype.set = set;
  }
  return copied;
}

const read = async (path) => new Uint8Array(await readFile(new URL(path, root)));

test('generateArtifacts copies a model into the heap at most once', async () => {
  const ext = await read('tests/data/external/mlp.onnx');
  const side = await read('tests/data/external/mlp.onnx.data');
  const golden = await read('tests/golden/cases/regression_mse_adamw/model.onnx');
  const cases = [
    ['a model given as bytes', golden, { loss: 'MSELoss', optimizer: 'AdamW' }],
    ['a model with external data, its side file given', ext, { loss: 'MSELoss', optimizer: 'AdamW', externalData: [{ path: 'mlp.onnx.data', data: side }] }],
    ['a model with its weights inside, held by reference', golden, { loss: 'MSELoss', optimizer: 'AdamW', requiresGrad: ['fc3.weight', 'fc3.bias'], keepExternalData: true }],
  ];
  for (const [what, model, options] of cases) {
    const copied = await copiedIn(model, options);
    assert.ok(copied > 0, `${what}: the model is read from its bytes`);
    assert.ok(copied <= model.byteLength, `${what}: ${copied} bytes of a ${model.byteLength}-byte model copied into the heap`);
  }
});

test('inspect: a model from the core\'s record of it, an optimizer model\'s sequences, a checkpoint', async () => {
  const { inspect } = await import('../../js/index.js');
  const golden = await read('tests/golden/cases/regression_mse_adamw/model.onnx');
  const info = await inspect(golden);
  assert.equal(info.kind, 'model');
  assert.deepEqual(info.inputs, [{ name: 'input', dtype: 'float32', shape: ['batch', 16] }]);
  assert.deepEqual(info.outputs, [{ name: 'output', dtype: 'float32', shape: ['batch', 3] }]);
  assert.deepEqual(info.ops.map((o) => o.op).sort(), ['Gemm', 'Sigmoid', 'Tanh']);
  assert.equal(info.parameterElements, (16 * 32 + 32) + (32 * 32 + 32) + (32 * 3 + 3));
  const art = await artifacts.generateArtifacts(golden, { loss: 'MSELoss', optimizer: 'AdamW' });
  const opt = await inspect(art.optimizerModel);
  assert.ok(opt.inputs.some((i) => i.dtype === 'seq(float32)'), JSON.stringify(opt.inputs));
  const ckpt = await inspect(art.checkpoint);
  assert.equal(ckpt.kind, 'checkpoint');
  assert.equal(ckpt.trainableElements, info.parameterElements);
  await assert.rejects(inspect(new Uint8Array([0x3a, 0x05, 1])), /the model bytes is neither a webtrain checkpoint nor an ONNX model webtrain can read: .*ModelProto/);
});
