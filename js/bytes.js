// The one place a model or checkpoint source becomes bytes in memory, for every entry point
// that needs them whole (CheckpointState.loadCheckpoint, Module.create, Optimizer.create,
// InferenceSession.create, onnxblock.buildModel); what a source may be is js/source.js's.
// Bytes that are an HTML page or JSON (a dev server's fallback page, an error body) are refused
// with a hint instead of failing to parse.
import { openSource, sniff, wholeOf } from './source.js';

/** The bytes of `parts` (Uint8Arrays) one after another, in a new array. */
export function concatBytes(parts) {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** FNV-1a (32 bits, unsigned) over the bytes of `parts`, in order. */
export function fnv1a(parts) {
  let h = 0x811c9dc5;
  for (const p of parts) for (let i = 0; i < p.length; i++) h = Math.imul(h ^ p[i], 0x01000193);
  return h >>> 0;
}

/**
 * The bytes of a model or checkpoint source (js/source.js): bytes given are returned as they
 * are. Throws a TypeError for a value that is no source, a WebtrainError when it cannot be read
 * or is no model/checkpoint.
 */
export async function readBytes(source) {
  const src = await openSource(source);
  const bytes = await wholeOf(src);
  return src.bytes ? bytes : sniff(bytes, src.what, src.hint);
}

// Where these were defined before js/source.js: their importers keep importing them from here.
export { describe, registerSource } from './source.js';
