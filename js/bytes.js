// Reads a model/checkpoint location into bytes: Uint8Array/ArrayBuffer as is, a file path in
// Node, a URL (http(s):, file:, blob:) with fetch or the file system.
import { importNode, isNode } from './node-builtin.js';

const sources = [];

/** Lets other layers (web/) handle locations such as idb://name (symmetric to storage.js registerSink). */
export function registerSource(test, read) {
  sources.push({ test, read });
}

export async function readBytes(source) {
  for (const s of sources) if (s.test(source)) return s.read(source);
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  const s = source instanceof URL ? source.href : String(source);
  // A scheme has 2+ characters, so Windows drive letters (C:\...) stay paths.
  if (isNode && (s.startsWith('file:') || !/^[a-z][a-z0-9+.-]+:/i.test(s))) {
    const { readFile } = await importNode('fs/promises');
    const path = s.startsWith('file:') ? new URL(s) : s;
    try {
      return new Uint8Array(await readFile(path));
    } catch (err) {
      throw new Error(`cannot read '${s}': ${err.message}`);
    }
  }
  const res = await fetch(s);
  if (!res.ok) throw new Error(`cannot fetch '${s}': HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}
