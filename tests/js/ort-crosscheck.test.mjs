// ONNX Runtime (onnxruntime-node) as an independent check of what webtrain writes: for every
// golden case, after training through the JS API,
//  (a) the exported inference model loads in ORT and gives webtrain's inference outputs;
//  (b) the eval model (plain ONNX: the parameters are graph inputs) loads in ORT and, fed the
//      state's current parameters and the eval batch, gives webtrain's eval loss;
// within the case's tolerances (tolerance.outputs, tolerance.loss).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { runCase, loadRef, compare } from '../golden/golden.mjs';

const casesDir = fileURLToPath(new URL('../golden/cases/', import.meta.url));
const cases = readdirSync(casesDir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(casesDir, d.name, 'case.json')))
  .map((d) => d.name)
  .sort();

const toOrt = (t) => new ort.Tensor(t.type, t.data, Array.from(t.dims));

async function ortSession(bytes, what) {
  try {
    return await ort.InferenceSession.create(bytes);
  } catch (err) {
    throw new Error(`ONNX Runtime rejects webtrain's ${what}: ${err.message}`);
  }
}

for (const name of cases) {
  test(`ONNX Runtime agrees with webtrain on ${name}`, async (t) => {
    const dir = join(casesDir, name);
    const r = await runCase(dir);
    const c = r.case;

    await t.test('exported inference model', async () => {
      const s = await ortSession(r.exported, 'exported inference model');
      const feeds = {};
      for (const n of s.inputNames) {
        assert.ok(c.inference.inputs[n], `exported model input '${n}' is not a model input of the case`);
        feeds[n] = toOrt(await loadRef(dir, c.inference.inputs[n]));
      }
      assert.deepEqual([...s.outputNames].sort(), Object.keys(c.inference.outputs).sort());
      const got = await s.run(feeds);
      for (const n of s.outputNames) {
        assert.deepEqual(Array.from(got[n].dims), Array.from(r.inference[n].dims), `output '${n}' shape`);
        compare(`ORT vs webtrain: inference ${n}`, r.inference[n], got[n].data, c.tolerance.outputs);
      }
      await s.release();
    });

    await t.test('eval model fed the trained parameters', async () => {
      const s = await ortSession(r.artifacts.evalModel, 'eval model');
      const feeds = {};
      let paramInputs = 0;
      for (const n of s.inputNames) {
        if (c.eval.inputs[n]) {
          feeds[n] = toOrt(await loadRef(dir, c.eval.inputs[n]));
        } else {
          const p = r.params.get(n);
          assert.ok(p, `eval model input '${n}' is neither a model/target input nor a parameter`);
          feeds[n] = new ort.Tensor('float32', p.data, p.dims);
          paramInputs++;
        }
      }
      assert.equal(paramInputs, r.params.size, 'the eval model takes every parameter as an input');
      const got = await s.run(feeds);
      const loss = got[s.outputNames[0]];
      assert.equal(loss.data.length, 1, 'the eval loss is a scalar');
      compare('ORT vs webtrain: eval loss', [r.evalLoss], loss.data, c.tolerance.loss);
      compare('ORT vs PyTorch: eval loss', [c.eval.loss], loss.data, c.tolerance.loss);
      await s.release();
    });
  });
}
