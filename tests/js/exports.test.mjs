// The C ABI boundary stays in sync: every _wtw_ function the JS layer calls is exported by the
// wasm build, and every function listed in src/wasm/exports.txt is defined in src/wasm/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { init } from '../../js/index.js';

const root = new URL('../../', import.meta.url);

async function jsSources(dir) {
  const out = [];
  for (const e of await readdir(new URL(dir, root), { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...(await jsSources(`${dir}${e.name}/`)));
    else if (/\.m?js$/.test(e.name)) out.push(await readFile(new URL(`${dir}${e.name}`, root), 'utf8'));
  }
  return out;
}

test('every _wtw_ function used by js/ is exported by the wasm module', async () => {
  const core = await init();
  const used = new Set((await jsSources('js/')).join('\n').match(/_wtw_[a-z0-9_]+/g));
  const missing = [...used].filter((f) => typeof core.m[f] !== 'function');
  assert.deepEqual(missing, [], `not exported: ${missing.join(', ')} (add them to src/wasm/exports.txt)`);
});

test('every name in src/wasm/exports.txt is defined in src/wasm/*.c or is the public C API', async () => {
  const listed = (await readFile(new URL('src/wasm/exports.txt', root), 'utf8')).split('\n').filter(Boolean);
  const dir = new URL('src/wasm/', root);
  const wasmSources = await Promise.all((await readdir(dir)).filter((f) => f.endsWith('.c')).map((f) => readFile(new URL(f, dir), 'utf8')));
  // wt_* exported under their own names are declared by the public header (defined in the core)
  const sources = [...wasmSources, await readFile(new URL('include/webtrain.h', root), 'utf8')].join('\n');
  const undefinedNames = listed.filter((n) => !new RegExp(`\\b${n.slice(1)}\\(`).test(sources));
  assert.deepEqual(undefinedNames, []);
});
