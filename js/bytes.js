// The one place a model or checkpoint source becomes bytes, for every entry point
// (artifacts.generateArtifacts, CheckpointState.loadCheckpoint, Module.create, Optimizer.create,
// InferenceSession.create, onnxblock.buildModel; web/ adds idb://NAME through registerSource):
//   - bytes: Uint8Array (as is), ArrayBuffer / SharedArrayBuffer, any typed array or DataView;
//   - a Blob or File (anything with arrayBuffer()), a fetch Response;
//   - a URL object or string: file: and plain paths are read from disk in Node, http(s):, blob:
//     and data: are fetched (relative strings too, in browsers);
//   - a model built by onnxblock.buildModel.
// Anything else is a TypeError naming what was given. A missing file or an HTTP error is a
// WebtrainError naming the path/URL and the status; bytes that are an HTML page or JSON (a dev
// server's fallback page, an error body) are refused with a hint instead of failing to parse.
import { WebtrainError } from './core.js';
import { importNode, isNode } from './node-builtin.js';
import { OnnxblockModel } from './built-model.js';

const sources = [];

/** Lets other layers (web/) handle locations such as idb://name (symmetric to storage.js registerSink). */
export function registerSource(test, read) {
  sources.push({ test, read });
}

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

const EXPECTED = 'a path, URL, Uint8Array, ArrayBuffer, Blob, File, Response or idb:// name';

/** What a value is, for error messages: 'null', 'a number (42)', 'an object of class Foo', ... */
export function describe(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  const t = typeof value;
  if (t === 'number' || t === 'boolean' || t === 'bigint') return `a ${t} (${String(value)})`;
  if (t === 'symbol' || t === 'function') return `a ${t}${value.name ? ` (${value.name})` : ''}`;
  if (Array.isArray(value)) return `an Array of length ${value.length}`;
  const cls = Object.getPrototypeOf(value)?.constructor?.name;
  if (!cls || cls === 'Object') return 'a plain object';
  return `an object of class ${cls}`;
}

export const isBlob = (v) => (typeof Blob !== 'undefined' && v instanceof Blob) || (typeof v?.arrayBuffer === 'function' && typeof v.size === 'number' && typeof v.type === 'string');
export const isResponse = (v) => (typeof Response !== 'undefined' && v instanceof Response) || (typeof v?.arrayBuffer === 'function' && typeof v.status === 'number' && typeof v.ok === 'boolean');

/** Whether s starts with a URL scheme (2+ characters: Windows drive letters, C:\..., stay paths). */
export const hasScheme = (s) => /^[a-z][a-z0-9+.-]+:/i.test(s);

/** In Node, the file path a location string names (a plain path or a file: URL); null for a URL to fetch (or outside Node). */
export async function nodeFilePath(s) {
  if (!isNode || !(s.startsWith('file:') || !hasScheme(s))) return null;
  return s.startsWith('file:') ? (await importNode('url')).fileURLToPath(s) : s;
}

/** Why a file could not be opened or read, in words (a Node error). */
export const whyUnreadable = (err) => ({ ENOENT: 'no such file', EISDIR: 'it is a directory', EACCES: 'permission denied' })[err.code] ?? err.message;

/** A WebtrainError with extra fields (status, code, cause). */
function failure(message, fields = {}) {
  return Object.assign(new WebtrainError(message), fields);
}

/**
 * The bytes of a model or checkpoint source (see the top of this file). Throws a TypeError for
 * a value that is no source, a WebtrainError when it cannot be read or is no model/checkpoint.
 */
export async function readBytes(source) {
  for (const s of sources) if (s.test(source)) return s.read(source);
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && source instanceof SharedArrayBuffer)) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  if (source instanceof OnnxblockModel) return source.bytes;
  if (isResponse(source)) return fromResponse(source, source.url || 'a Response');
  if (isBlob(source)) {
    const what = typeof source.name === 'string' && source.name ? `File '${source.name}'` : `a Blob of ${source.size} bytes`;
    return sniff(new Uint8Array(await source.arrayBuffer()), what, 'check the file chosen');
  }
  if (typeof source !== 'string' && !(source instanceof URL)) throw new TypeError(`expected ${EXPECTED}; got ${describe(source)}`);
  const s = source instanceof URL ? source.href : source;
  if (s.startsWith('idb:')) throw new WebtrainError(`'${s}': idb:// locations need IndexedDB and the browser entry (import from 'webtrain' in a page or worker, or 'webtrain/web')`);
  const path = await nodeFilePath(s);
  if (path !== null) return fromFile(path);
  let res;
  try {
    res = await fetch(s);
  } catch (err) {
    throw failure(`cannot fetch '${s}': ${err.cause?.message ?? err.message}`, { cause: err });
  }
  return fromResponse(res, res.url || s); // res.url: absolute, after redirects
}

async function fromFile(path) {
  const { readFile } = await importNode('fs/promises');
  let bytes;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (err) {
    const why = whyUnreadable(err);
    throw failure(`cannot read '${path}': ${why}${err.code && why !== err.message ? ` (${err.code})` : ''}`, { code: err.code, path, cause: err });
  }
  return sniff(bytes, `file '${path}'`, 'check the path');
}

async function fromResponse(res, url) {
  if (!res.ok) {
    const status = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
    throw failure(`cannot fetch '${url}': ${status}`, { status: res.status, url });
  }
  if (res.bodyUsed) throw new WebtrainError(`cannot read ${url === 'a Response' ? url : `the Response from '${url}'`}: its body was already read`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  return sniff(bytes, url === 'a Response' ? url : `'${url}'`, `check the URL (HTTP status ${res.status} from ${url})`);
}

const text = new TextDecoder();

/**
 * `bytes` unless they are an HTML page or JSON (what a dev server's fallback page, an error
 * page or an API answer look like): ONNX (protobuf) and checkpoints (flatbuffer) never start
 * with '<', '{' or '['.
 */
export function sniff(bytes, what, hint) {
  if (bytes.byteLength >= 8 && text.decode(bytes.subarray(4, 8)) === 'ODTC') return bytes; // a checkpoint
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length && i < 512 && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  const head = text.decode(bytes.subarray(i, i + 64));
  const kind = /^<(!doctype|html|head|body|!--|\?xml|script|meta|title|div|p\b)/i.test(head) ? 'an HTML page' : /^[{[]/.test(head) ? 'JSON' : null;
  if (!kind) return bytes;
  const start = head.replace(/\s+/g, ' ').slice(0, 40);
  throw new WebtrainError(`${what} is ${kind}, not an ONNX model or checkpoint (it starts with '${start}'): ${hint}`);
}
