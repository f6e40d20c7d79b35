// Sources: the one place that tells what kind of thing a model, side file or checkpoint was given
// as, and reads it. openSource(value) -> a Source:
//   { what, hint, name, size, read?(offset, dst), chunks?(), bytes?, close() }
// what names it in messages ("file '/m.onnx'", "'https://…/m.onnx'", "File 'm.onnx'"), hint says
// what to check when it is not what was expected, name is a file name for it where it has one
// (a path's or URL's last part, a File's name), size its bytes (undefined: a stream without
// Content-Length). A positional source (bytes in memory, a Blob or File, a Node file) has
// read(offset, dst), filling dst from that offset (a Node file reads straight into dst, which may
// be the wasm heap); a stream (a fetch Response, a URL fetched) has chunks(), its body as a
// ReadableStream of Uint8Arrays, read once. Bytes in memory are also `bytes`; `loaded` marks
// bytes that were not given as such (a registered location's, a built model's).
//
// What a value may be: bytes (Uint8Array, ArrayBuffer, SharedArrayBuffer, any typed array or
// DataView); a Blob or File; a fetch Response; a URL object or string: file: and plain paths are
// read from disk in Node, http(s):, blob: and data: are fetched (relative strings too, in
// browsers); a model built by onnxblock.buildModel; a location another layer registered
// (web/: idb://NAME, registerSource). Anything else is a TypeError naming what was given; a
// missing file or an HTTP error a WebtrainError naming the path or URL and the status.
//
// `kind` words the messages of side files ("cannot read external data file '…'"); without it
// they are a model's or checkpoint's ("cannot read '…'").
import { WebtrainError } from './core.js';
import { importNode, isNode } from './node-builtin.js';
import { OnnxblockModel } from './built-model.js';

const registered = [];

/** Lets other layers (web/) read locations such as idb://name: read(location) -> bytes. */
export function registerSource(test, read) {
  registered.push({ test, read });
}

const EXPECTED = 'a path, URL, Uint8Array, ArrayBuffer, Blob, File, Response or idb:// name';
/** The most bytes one positional read moves (Node's fs limit is 2 GB - 1). */
export const IO_CHUNK = 256 * 2 ** 20;

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
/** Bytes in memory: any typed array, DataView, ArrayBuffer or SharedArrayBuffer. */
export const isBytes = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v) || (typeof SharedArrayBuffer !== 'undefined' && v instanceof SharedArrayBuffer);
/** Bytes in memory as a Uint8Array over the same memory. */
export const u8Of = (v) => (v instanceof Uint8Array ? v : ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(v));

/** Whether s starts with a URL scheme (2+ characters: Windows drive letters, C:\..., stay paths). */
/** A path or URL source's location (a URL's href, a string as it is), else null. */
export const locationOf = (v) => (v instanceof URL ? v.href : typeof v === 'string' ? v : null);

export const hasScheme = (s) => /^[a-z][a-z0-9+.-]+:/i.test(s);

/** In Node, the file path a location string names (a plain path or a file: URL); null for a URL to fetch (or outside Node). */
export async function nodeFilePath(s) {
  if (!isNode || !(s.startsWith('file:') || !hasScheme(s))) return null;
  return s.startsWith('file:') ? (await importNode('url')).fileURLToPath(s) : s;
}

/** Why a file could not be opened or read, in words (a Node error). */
export const whyUnreadable = (err) => ({ ENOENT: 'no such file', EISDIR: 'it is a directory', EACCES: 'permission denied' })[err.code] ?? err.message;

/** A WebtrainError with extra fields (status, code, path, cause). */
const failure = (message, fields = {}) => Object.assign(new WebtrainError(message), fields);

/** A file name a location may be: the last part of a path or URL path, else null. */
function fileName(name) {
  const base = (name ?? '').split(/[/\\]/).pop();
  return base && base !== '.' && base !== '..' && !base.includes(':') ? base : null;
}

/** Bytes in memory as a source. */
export function memorySource(b, what) {
  return { what, hint: 'check what was passed', name: null, size: b.byteLength, bytes: b, read: async (off, dst) => dst.set(b.subarray(off, off + dst.byteLength)), close: async () => {} };
}

function blobSource(blob) {
  const what = typeof blob.name === 'string' && blob.name ? `File '${blob.name}'` : `a Blob of ${blob.size} bytes`;
  const read = async (off, dst) => dst.set(new Uint8Array(await blob.slice(off, off + dst.byteLength).arrayBuffer()));
  return { what, hint: 'check the file chosen', name: fileName(blob.name), size: blob.size, blob, read, close: async () => {} };
}

async function fileSource(path, kind) {
  const fs = await importNode('fs/promises');
  const cannot = (why, err) => failure(kind ? `cannot read ${kind} file '${path}': ${why}` : `cannot read '${path}': ${why}${err?.code && why !== err.message ? ` (${err.code})` : ''}`, { code: err.code, path, cause: err });
  let fh;
  try {
    fh = await fs.open(path, 'r');
  } catch (err) {
    throw cannot(whyUnreadable(err), err);
  }
  const st = await fh.stat();
  if (!st.isFile()) {
    await fh.close();
    throw cannot('it is a directory', { code: 'EISDIR', message: 'EISDIR' });
  }
  const { size } = st;
  const read = async (off, dst) => {
    for (let done = 0; done < dst.byteLength;) {
      const { bytesRead } = await fh.read(dst, done, Math.min(IO_CHUNK, dst.byteLength - done), off + done);
      if (!bytesRead) throw new WebtrainError(`file '${path}' ended at byte ${off + done} while reading${kind ? ` ${kind}` : ''}`);
      done += bytesRead;
    }
  };
  return { what: `file '${path}'`, hint: 'check the path', name: fileName(path), size, path, read, close: () => fh.close() };
}

/** A fetch Response as a stream source (an HTTP error or a used body: a WebtrainError). */
export function responseSource(res, url, kind) {
  if (!res.ok) {
    const status = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
    throw failure(`cannot fetch ${kind ? `${kind} ` : ''}'${url}': ${status}`, { status: res.status, url });
  }
  const anonymous = url === 'a Response';
  if (res.bodyUsed) throw new WebtrainError(`cannot read ${anonymous ? url : `the Response from '${url}'`}: its body was already read`);
  const length = res.headers?.get('content-length');
  let name = null;
  try {
    name = anonymous ? null : fileName(decodeURIComponent(new URL(url, globalThis.location?.href).pathname));
  } catch {
    // not a URL with a path
  }
  return {
    what: anonymous ? url : `'${url}'`,
    hint: `check the URL (HTTP status ${res.status} from ${url})`,
    name,
    url: anonymous ? null : url,
    size: length === null || length === undefined ? undefined : Number(length),
    response: res,
    chunks: () => res.body,
    close: async () => res.body?.cancel().catch(() => {}),
  };
}

async function fetched(s, kind) {
  let res;
  try {
    res = await fetch(kind ? s : new URL(s, globalThis.location?.href));
  } catch (err) {
    throw failure(`cannot fetch ${kind ? `${kind} ` : ''}'${s}': ${err.cause?.message ?? err.message}`, { cause: err });
  }
  return responseSource(res, res.url || s, kind); // res.url: absolute, after redirects
}

/**
 * A source (see the top of this file). options.kind: the side file's kind for messages;
 * options.expected: what a TypeError says is expected.
 */
export async function openSource(source, { kind = null, expected = EXPECTED } = {}) {
  // (bytes read from elsewhere: `loaded`, not a file to refer to later)
  for (const r of registered) if (r.test(source)) return { ...memorySource(await r.read(source), `'${source}'`), loaded: true };
  if (isBytes(source)) return memorySource(u8Of(source), kind ? `the externalData bytes (${u8Of(source).byteLength})` : 'the model bytes');
  if (source instanceof OnnxblockModel) return { ...memorySource(source.bytes, 'the built model'), loaded: true };
  if (isResponse(source)) return responseSource(source, source.url || 'a Response', kind);
  if (isBlob(source)) return blobSource(source);
  if (typeof source !== 'string' && !(source instanceof URL)) throw new TypeError(`${kind ? 'externalData: ' : ''}expected ${expected}; got ${describe(source)}`);
  const s = source instanceof URL ? source.href : source;
  if (s.startsWith('idb:')) throw new WebtrainError(`'${s}': idb:// locations need IndexedDB and the browser entry (import from 'webtrain' in a page or worker, or 'webtrain/web')`);
  const path = await nodeFilePath(s);
  if (path !== null) return fileSource(path, kind);
  return fetched(s, kind);
}

/** All of a source's bytes (a new array unless it is bytes in memory); closes it. */
export async function wholeOf(src) {
  try {
    if (src.bytes) return src.bytes;
    if (src.response) return new Uint8Array(await src.response.arrayBuffer());
    if (src.blob) return new Uint8Array(await src.blob.arrayBuffer());
    const out = new Uint8Array(src.size);
    await src.read(0, out);
    return out;
  } finally {
    await src.close();
  }
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
