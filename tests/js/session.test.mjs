// InferenceSession on the WebAssembly build: forward pass, plan cache, and clear errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { InferenceSession, Tensor, init } from '../../js/index.js';
import { decodeTensorProto } from '../tensor-proto.mjs';

const cases = new URL('../golden/cases/', import.meta.url);
const mlp = new URL('mlp_ce_adamw/model.onnx', cases);

async function f32(name, caseName = 'mlp_ce_adamw') {
  const buf = await readFile(new URL(`${caseName}/${name}`, cases));
  return new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
}

test('the core is built with SIMD128', async () => {
  const core = await init();
  assert.equal(core.simdName(), 'wasm-simd128');
});

test('forward pass of the MLP matches PyTorch at every batch size', async () => {
  const s = await InferenceSession.create(mlp);
  assert.deepEqual(s.inputNames, ['input']);
  assert.deepEqual(s.outputNames, ['output']);
  const x = await f32('eval__input.bin');
  const pb = await readFile(new URL('mlp_ce_adamw/forward/test_data_set_0/output_0.pb', cases));
  const expected = (await decodeTensorProto(new Uint8Array(pb))).tensor;
  const n = x.length / 784;
  const full = await s.run({ input: new Tensor('float32', x, [n, 784]) });
  assert.deepEqual(full.output.dims, [n, 10]);
  assert.deepEqual(full.output.dims, expected.dims);
  for (let i = 0; i < expected.size; i++) {
    const e = expected.data[i];
    assert.ok(Math.abs(full.output.data[i] - e) <= 1e-5 + 1e-4 * Math.abs(e), `output[${i}]: ${full.output.data[i]} vs ${e}`);
  }
  // Running the first 3 rows alone gives the same rows (a second plan, cached separately).
  const part = await s.run({ input: new Tensor('float32', x.slice(0, 3 * 784), [3, 784]) });
  assert.deepEqual(part.output.dims, [3, 10]);
  for (let i = 0; i < 30; i++) assert.ok(Math.abs(part.output.data[i] - full.output.data[i]) < 1e-6);
  const again = await s.run({ input: new Tensor('float32', x, [n, 784]) });
  assert.deepEqual(Array.from(again.output.data), Array.from(full.output.data));
  assert.ok(s.arenaBytes > 0);
  s.release();
});

test('malformed model bytes give a clear error', async () => {
  await assert.rejects(InferenceSession.create(new Uint8Array([1, 2, 3, 4, 5])), /not a valid ONNX model/);
});

test('a missing file names the path', async () => {
  await assert.rejects(InferenceSession.create('/nonexistent/model.onnx'), /nonexistent\/model\.onnx/);
});

test('wrong input shape, dtype and names are reported with what was expected', async () => {
  const s = await InferenceSession.create(mlp);
  await assert.rejects(s.run({ input: new Tensor('float32', new Float32Array(8 * 5), [8, 5]) }), /input 'input' has shape \[8,5\]; expected \[batch,784\]/);
  await assert.rejects(s.run({ input: new Tensor('int32', new Int32Array(784), [1, 784]) }), /input 'input' has dtype int32; expected float/);
  await assert.rejects(s.run({}), /input 'input' is missing/);
  await assert.rejects(s.run({ input: new Tensor('float32', new Float32Array(784), [1, 784]), bogus: new Tensor('float32', new Float32Array(1), [1]) }), /'bogus' is not an input/);
  // the session still works after errors
  const ok = await s.run({ input: new Tensor('float32', new Float32Array(784), [1, 784]) });
  assert.deepEqual(ok.output.dims, [1, 10]);
  s.release();
  await assert.rejects(s.run({}), /released/);
});

test('Tensor validates its data against dims', () => {
  assert.throws(() => new Tensor('float32', new Float32Array(5), [2, 3]), /hold 6 elements; the data has 5/);
  assert.throws(() => new Tensor('float64', new Float64Array(1), [1]), /unsupported tensor type/);
  assert.throws(() => new Tensor('float16', new Float32Array(1), [1]), /a float16 tensor needs a Uint16Array; got Float32Array/);
  assert.equal(new Tensor('float16', new Uint16Array([0x3c00]), [1]).type, 'float16');
  assert.equal(new Tensor(new BigInt64Array(2)).type, 'int64');
});
