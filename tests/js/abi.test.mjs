// js/abi.js mirrors the C enums that cross to JavaScript (include/webtrain.h, src/wasm/abi.h):
// this test parses the headers and fails when a mirror disagrees with its C enum.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as abi from '../../js/abi.js';

const root = new URL('../../', import.meta.url);

/** Every `enum name { A = 1, B, ... }` of a C header: name -> Map(enumerator -> value). */
export function parseEnums(text) {
  const src = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  const enums = new Map();
  for (const m of src.matchAll(/enum\s+(\w+)\s*\{([^}]*)\}/g)) {
    const values = new Map();
    let next = 0;
    for (const item of m[2].split(',').map((s) => s.trim()).filter(Boolean)) {
      const e = /^(\w+)\s*(?:=\s*(-?(?:0x[0-9a-f]+|\d+)))?$/i.exec(item);
      assert.ok(e, `enum ${m[1]}: cannot read '${item}' (the mirror test reads literal values only)`);
      const v = e[2] !== undefined ? Number(e[2]) : next;
      values.set(e[1], v);
      next = v + 1;
    }
    enums.set(m[1], values);
  }
  return enums;
}

const headers = new Map();
const enumsOf = (header) => {
  if (!headers.has(header)) headers.set(header, parseEnums(readFileSync(new URL(header, root), 'utf8')));
  return headers.get(header);
};

test('every mirror in js/abi.js equals its C enum', () => {
  for (const [js, { header, name, prefix }] of Object.entries(abi.C_ENUMS)) {
    const c = enumsOf(header).get(name);
    assert.ok(c, `${header} has no enum ${name} (mirrored as ${js} in js/abi.js)`);
    const expected = Object.fromEntries([...c].map(([k, v]) => {
      assert.ok(k.startsWith(prefix), `${header}: ${k} of enum ${name} does not start with ${prefix}`);
      return [k.slice(prefix.length), v];
    }));
    assert.deepEqual({ ...abi[js] }, expected, `js/abi.js ${js} disagrees with enum ${name} of ${header}`);
  }
});

test('js/abi.d.ts declares the same literals as js/abi.js', () => {
  const dts = readFileSync(new URL('js/abi.d.ts', root), 'utf8');
  for (const js of Object.keys(abi.C_ENUMS)) {
    const m = new RegExp(`export declare const ${js}: \\{([^}]*)\\}`).exec(dts);
    assert.ok(m, `js/abi.d.ts does not declare ${js}`);
    const declared = Object.fromEntries([...m[1].matchAll(/readonly (\w+): (-?\d+);/g)].map((x) => [x[1], Number(x[2])]));
    assert.deepEqual(declared, { ...abi[js] }, `js/abi.d.ts ${js} disagrees with js/abi.js`);
  }
});

test('every enum of src/wasm/abi.h is mirrored', () => {
  const mirrored = new Set(Object.values(abi.C_ENUMS).map((e) => e.name));
  for (const name of enumsOf('src/wasm/abi.h').keys()) assert.ok(mirrored.has(name), `enum ${name} of src/wasm/abi.h has no mirror in js/abi.js`);
});

test('the parser reads implicit values and sees a disagreement', () => {
  const e = parseEnums('enum x { /* c */ X_A = 2, X_B, X_C = 7 };');
  assert.deepEqual([...e.get('x')], [['X_A', 2], ['X_B', 3], ['X_C', 7]]);
});

test('no JavaScript file names an ABI number the mirror holds', () => {
  // The shapes that used to carry them: an ONNX dtype table, LossType/OptimType literals.
  const files = [];
  const walk = (dir) => {
    for (const ent of readdirSync(new URL(dir, root), { withFileTypes: true })) {
      if (ent.isDirectory()) walk(`${dir}${ent.name}/`);
      else if (/\.(m?js|d\.ts)$/.test(ent.name) && !/^abi\.(js|d\.ts)$/.test(ent.name)) files.push(`${dir}${ent.name}`);
    }
  };
  walk('js/');
  walk('web/');
  for (const f of files) {
    const text = readFileSync(new URL(f, root), 'utf8');
    assert.doesNotMatch(text, /float32:\s*\{?\s*(code:\s*)?1\b/, `${f} hard-codes the float32 code`);
    assert.doesNotMatch(text, /MSELoss:\s*1\b/, `${f} hard-codes LossType`);
    assert.doesNotMatch(text, /AdamW:\s*1\b/, `${f} hard-codes OptimType`);
    // Selector arguments (the second) of the ABI functions that take one: a name, not a number.
    const selector = /_wtw_(gen_add_name|gen_set_loss_weights|gen_result_\w+|model_info_io_\w+|module_(?:input|output)_\w+|module_set_input)\(\s*[^,()]+,\s*(\d+)\s*[,)]/.exec(text);
    assert.equal(selector, null, `${f}: _wtw_${selector?.[1]} is passed the selector ${selector?.[2]}; use the js/abi.js name`);
  }
});
