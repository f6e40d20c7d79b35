#!/usr/bin/env node
// Post-link step of the relaxed-SIMD builds (dist/*-fma.wasm): rewrites the relaxed-SIMD prototype's
// fused multiply-add, which Emscripten 3.1.6's clang 14 emits and binaryen 108 accepts, into the
// final instruction that engines run.
//
//   prototype  f32x4.fma          0xfd 0xaf 0x01   (x, y, z) -> x + y * z
//   final      f32x4.relaxed_madd 0xfd 0x85 0x02   (a, b, c) -> a * b + c
//
// The meaning differs (the prototype's addend comes first; binaryen 108 folds constants with
// that meaning), so each instruction becomes
//   local.set z; local.set y; local.set x; local.get y; local.get z; local.get x; relaxed_madd
// with three v128 locals added to each function that has one (V8's optimizing tier keeps such
// locals in registers: no moves remain). The code section is decoded instruction by instruction
// (MVP, sign-ext, bulk memory, SIMD128, threads), not searched for byte patterns; an opcode it
// does not know stops the build with its offset. Final relaxed-SIMD opcodes pass through.
//
//   node [--experimental-wasm-relaxed-simd] scripts/wasm-relaxed.mjs in.wasm out.wasm [--glue BUILT REF]...
// writes out.wasm (through a temporary file and a rename) and prints the count. Where the engine
// runs relaxed SIMD (Node 20 with the flag) it checks that the result validates and imports and
// exports what REF's .wasm does. --glue: the JavaScript Emscripten wrote for this build (BUILT)
// must equal the SIMD128 build's (REF) but for the file names, so that REF loads this .wasm.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';

export const PROTO_FMA_F32X4 = 0xaf;
export const RELAXED_MADD_F32X4 = 0x105;
const V128 = 0x7b;

// SIMD sub-opcodes the final SIMD128 proposal leaves unassigned below 0x100 (the prototype's
// relaxed instructions used some of them): anything here but PROTO_FMA_F32X4 is an error.
const SIMD_UNASSIGNED = new Set([0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb, 0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4]);
const RELAXED_FINAL_LAST = 0x113; // final relaxed-SIMD opcodes 0x100..0x113 have no immediates

class Reader {
  constructor(bytes, pos = 0, end = bytes.length) {
    this.b = bytes;
    this.pos = pos;
    this.end = end;
  }
  byte() {
    if (this.pos >= this.end) throw new Error(`unexpected end of data at offset ${this.pos}`);
    return this.b[this.pos++];
  }
  u32() {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const x = this.byte();
      result += (x & 0x7f) * 2 ** shift;
      if (!(x & 0x80)) return result;
    }
    throw new Error(`LEB128 longer than 5 bytes at offset ${this.pos}`);
  }
  skipLeb() {
    while (this.byte() & 0x80);
  }
  skip(n) {
    if (this.pos + n > this.end) throw new Error(`unexpected end of data at offset ${this.pos}`);
    this.pos += n;
  }
  name() {
    const n = this.u32();
    this.skip(n);
  }
}

export function leb(n) {
  const out = [];
  do {
    let x = n % 128;
    n = Math.floor(n / 128);
    if (n) x |= 0x80;
    out.push(x);
  } while (n);
  return out;
}

function memarg(r) {
  const align = r.u32();
  if (align & 0x40) r.u32(); // multi-memory: a memory index follows
  r.skipLeb(); // offset
}

function blockType(r) {
  const x = r.b[r.pos];
  if (x === 0x40 || (x >= 0x6f && x <= 0x7f)) r.pos++;
  else r.skipLeb(); // a type index (s33)
}

/** Skips the immediates of a 0xfd (SIMD) instruction; returns its sub-opcode. */
function simd(r, where) {
  const op = r.u32();
  if (op <= 0x0b || op === 0x5c || op === 0x5d) memarg(r);
  else if (op === 0x0c || op === 0x0d) r.skip(16);
  else if (op >= 0x15 && op <= 0x22) r.skip(1);
  else if (op >= 0x54 && op <= 0x5b) {
    memarg(r);
    r.skip(1);
  } else if (op === PROTO_FMA_F32X4) return op;
  else if (SIMD_UNASSIGNED.has(op) || op > RELAXED_FINAL_LAST) {
    throw new Error(`unknown SIMD instruction 0xfd ${op.toString(16)} ${where()}: only SIMD128, the final relaxed-SIMD opcodes and the prototype f32x4.fma are handled`);
  }
  return op;
}

/** Skips one instruction's opcode and immediates; returns 'fma' for the prototype f32x4.fma. */
function instruction(r, where) {
  const op = r.byte();
  if (op <= 0x01 || op === 0x05 || op === 0x0b || op === 0x0f || op === 0x1a || op === 0x1b || op === 0xd1) return null;
  if (op >= 0x02 && op <= 0x04) return blockType(r), null;
  if (op === 0x0c || op === 0x0d || op === 0x10 || op === 0x12 || (op >= 0x20 && op <= 0x26) || op === 0xd2) return r.u32(), null;
  if (op === 0x0e) {
    const n = r.u32();
    for (let i = 0; i <= n; i++) r.u32();
    return null;
  }
  if (op === 0x11 || op === 0x13) return r.u32(), r.u32(), null;
  if (op === 0x1c) {
    const n = r.u32();
    r.skip(n);
    return null;
  }
  if (op >= 0x28 && op <= 0x3e) return memarg(r), null;
  if (op === 0x3f || op === 0x40 || op === 0xd0) return r.u32(), null;
  if (op === 0x41 || op === 0x42) return r.skipLeb(), null;
  if (op === 0x43) return r.skip(4), null;
  if (op === 0x44) return r.skip(8), null;
  if (op >= 0x45 && op <= 0xc4) return null;
  if (op === 0xfc) {
    const sub = r.u32();
    const imms = [0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 2, 1, 2, 1, 2, 1, 1, 1][sub];
    if (imms === undefined) throw new Error(`unknown instruction 0xfc ${sub} ${where()}`);
    for (let i = 0; i < imms; i++) r.u32();
    return null;
  }
  if (op === 0xfd) return simd(r, where) === PROTO_FMA_F32X4 ? 'fma' : null;
  if (op === 0xfe) {
    const sub = r.u32();
    if (sub === 0x03) r.skip(1);
    else if (sub <= 0x02 || (sub >= 0x10 && sub <= 0x4e)) memarg(r);
    else throw new Error(`unknown atomic instruction 0xfe ${sub.toString(16)} ${where()}`);
    return null;
  }
  throw new Error(`unknown opcode 0x${op.toString(16)} ${where()}`);
}

/** Parameter counts of the module's functions (imported ones first), from its type, import and function sections. */
function paramCounts(bytes, sections) {
  const types = [];
  const funcs = [];
  for (const s of sections) {
    const r = new Reader(bytes, s.start, s.end);
    if (s.id === 1) {
      for (let n = r.u32(); n > 0; n--) {
        if (r.byte() !== 0x60) throw new Error('type section: only function types are handled');
        const params = r.u32();
        r.skip(params);
        r.skip(r.u32());
        types.push(params);
      }
    } else if (s.id === 2) {
      for (let n = r.u32(); n > 0; n--) {
        r.name();
        r.name();
        const kind = r.byte();
        if (kind === 0) funcs.push(types[r.u32()]);
        else if (kind === 1 || kind === 2) {
          if (kind === 1) r.byte(); // reftype
          const flags = r.byte();
          r.u32();
          if (flags & 1) r.u32();
        } else if (kind === 3) r.skip(2);
        else throw new Error(`import section: unknown import kind ${kind}`);
      }
    } else if (s.id === 3) {
      for (let n = r.u32(); n > 0; n--) funcs.push(types[r.u32()]);
    }
  }
  return funcs;
}

/** Rewrites one function body; returns the new body bytes (or the same array) and the count. */
function rewriteBody(bytes, start, end, nParams, funcIndex) {
  const r = new Reader(bytes, start, end);
  const nDecls = r.u32();
  const declsStart = r.pos;
  let nLocals = 0;
  for (let i = 0; i < nDecls; i++) {
    nLocals += r.u32();
    r.byte();
  }
  const codeStart = r.pos;
  const where = () => `in function ${funcIndex} at offset 0x${r.pos.toString(16)}`;
  const spans = []; // [start, end) of each prototype f32x4.fma
  while (r.pos < end) {
    const at = r.pos;
    if (instruction(r, where) === 'fma') spans.push([at, r.pos]);
  }
  if (r.pos !== end || bytes[end - 1] !== 0x0b) throw new Error(`function ${funcIndex}: body does not end with 'end'`);
  if (!spans.length) return { body: null, count: 0 };
  const [x, y, z] = [0, 1, 2].map((i) => leb(nParams + nLocals + i));
  const seq = [0x21, ...z, 0x21, ...y, 0x21, ...x, 0x20, ...y, 0x20, ...z, 0x20, ...x, 0xfd, ...leb(RELAXED_MADD_F32X4)];
  const out = [...leb(nDecls + 1)];
  for (let i = declsStart; i < codeStart; i++) out.push(bytes[i]); // the existing declarations
  out.push(...leb(3), V128);
  let from = codeStart;
  const parts = [Uint8Array.from(out)];
  for (const [a, b] of spans) {
    parts.push(bytes.subarray(from, a), Uint8Array.from(seq));
    from = b;
  }
  parts.push(bytes.subarray(from, end));
  return { body: concat(parts), count: spans.length };
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** { bytes, count }: the module with every prototype f32x4.fma rewritten (bytes is the input when count is 0). */
export function rewriteRelaxed(input) {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  const head = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (bytes.length < 8 || head.some((v, i) => bytes[i] !== v)) throw new Error('not a WebAssembly binary (version 1)');
  const sections = [];
  const r = new Reader(bytes, 8);
  while (r.pos < bytes.length) {
    const at = r.pos;
    const id = r.byte();
    const size = r.u32();
    sections.push({ id, at, start: r.pos, end: r.pos + size });
    r.skip(size);
  }
  const code = sections.find((s) => s.id === 10);
  if (!code) return { bytes, count: 0 };
  const params = paramCounts(bytes, sections);
  const nImported = params.length - (() => {
    const f = sections.find((s) => s.id === 3);
    return f ? new Reader(bytes, f.start, f.end).u32() : 0;
  })();
  const cr = new Reader(bytes, code.start, code.end);
  const n = cr.u32();
  const bodies = [];
  let count = 0;
  for (let i = 0; i < n; i++) {
    const size = cr.u32();
    const start = cr.pos;
    cr.skip(size);
    const fi = nImported + i;
    if (params[fi] === undefined) throw new Error(`code section: function ${fi} has no type`);
    const rw = rewriteBody(bytes, start, start + size, params[fi], fi);
    count += rw.count;
    const body = rw.body ?? bytes.subarray(start, start + size);
    bodies.push(Uint8Array.from(leb(body.length)), body);
  }
  if (cr.pos !== code.end) throw new Error('code section: trailing bytes');
  if (!count) return { bytes, count };
  const payload = concat([Uint8Array.from(leb(n)), ...bodies]);
  return {
    bytes: concat([bytes.subarray(0, code.at), Uint8Array.from([10, ...leb(payload.length)]), payload, bytes.subarray(code.end)]),
    count,
  };
}

/** Counts the final f32x4.relaxed_madd and the prototype f32x4.fma instructions in a module's code. */
export function countRelaxed(input) {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  const counts = { madd: 0, prototype: 0 };
  const r = new Reader(bytes, 8);
  while (r.pos < bytes.length) {
    const id = r.byte();
    const size = r.u32();
    const end = r.pos + size;
    if (id !== 10) {
      r.pos = end;
      continue;
    }
    for (let n = r.u32(); n > 0; n--) {
      const bodyEnd = r.u32() + r.pos;
      for (let d = r.u32(); d > 0; d--) r.u32(), r.byte();
      while (r.pos < bodyEnd) {
        const at = r.pos;
        if (instruction(r, () => `at offset 0x${at.toString(16)}`) === 'fma') counts.prototype++;
        else if (bytes[at] === 0xfd && new Reader(bytes, at + 1).u32() === RELAXED_MADD_F32X4) counts.madd++;
      }
    }
  }
  return counts;
}

/** `built` (the relaxed-SIMD build's glue) equals `reference` (the SIMD128 build's) once its file names are the reference's. */
function checkGlue(built, reference) {
  const base = (p) => basename(p).replace(/\..*$/, ''); // webtrain-core-mt-fma.worker.js -> webtrain-core-mt-fma
  const a = readFileSync(built, 'utf8').replaceAll(base(built), base(reference));
  if (a !== readFileSync(reference, 'utf8')) {
    throw new Error(`${built} differs from ${reference} beyond the file names: the relaxed-SIMD .wasm could not be loaded by the SIMD128 build's JavaScript (did the link options of the two builds diverge? cmake/wasm-fma.cmake copies them)`);
  }
}

/** The rewritten module imports and exports what the reference (SIMD128) module does. */
function checkInterface(mod, referencePath) {
  const ref = new WebAssembly.Module(readFileSync(referencePath));
  const iface = (m) => JSON.stringify([WebAssembly.Module.imports(m), WebAssembly.Module.exports(m)]);
  if (iface(mod) !== iface(ref)) throw new Error(`its imports or exports differ from ${referencePath}'s`);
}

function main(args) {
  const [inPath, outPath, ...rest] = args;
  const glue = [];
  for (let i = 0; i < rest.length; i += 3) {
    if (rest[i] !== '--glue' || !rest[i + 2]) throw new Error(`expected --glue BUILT REFERENCE, got ${rest.slice(i).join(' ')}`);
    glue.push([rest[i + 1], rest[i + 2]]);
  }
  if (!inPath || !outPath) {
    process.stderr.write('usage: node [--experimental-wasm-relaxed-simd] scripts/wasm-relaxed.mjs in.wasm out.wasm [--glue built.mjs reference.mjs]...\n');
    process.exit(2);
  }
  for (const [built, reference] of glue) checkGlue(built, reference);
  const { bytes, count } = rewriteRelaxed(readFileSync(inPath));
  if (!count) throw new Error(`${inPath}: no prototype f32x4.fma to rewrite (was it compiled with -mrelaxed-simd?)`);
  let checked = 'not validated: run node with --experimental-wasm-relaxed-simd to check';
  if (WebAssembly.validate(RELAXED_PROBE)) {
    let mod;
    try {
      mod = new WebAssembly.Module(bytes);
    } catch (err) {
      throw new Error(`${inPath}: the rewritten module does not validate: ${err.message}`);
    }
    const ref = glue.find(([, r]) => r.endsWith('.mjs'))?.[1].replace(/\.mjs$/, '.wasm');
    if (ref) checkInterface(mod, ref);
    checked = ref ? `validated, same imports and exports as ${basename(ref)}` : 'validated';
  }
  writeFileSync(`${outPath}.tmp`, bytes);
  renameSync(`${outPath}.tmp`, outPath);
  process.stdout.write(`wasm-relaxed: ${outPath}: ${count} f32x4.fma -> f32x4.relaxed_madd (${checked})\n`);
}

// (module (func (param v128 v128 v128) (result v128) local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd)):
// the same probe as js/core.js's.
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2, 253, 133, 2, 11]);

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`wasm-relaxed: error: ${err.message}\n`);
    process.exit(1);
  }
}
