// Models with their weights inside the .onnx file (how torch.onnx.export saves
// anything under 2 GB): held once, like a base saved with external data.
//
// scanModel(source) reads a model's protobuf without keeping its weights: every initializer
// whose raw_data (or packed float_data) has INSIDE_MIN bytes or more is skipped, and the model
// handed to the core (the "skeleton") says instead that the tensor is external data of the
// model file itself: location = the file's name, offset = where its raw_data bytes start in
// the file, length. From there a weights-inside base is a model with external data whose side
// file is the .onnx itself (js/external.js): generation keeps the frozen weights by reference,
// the training and eval models refer to the base file at those offsets (ONNX Runtime reads
// them there too: they are plain external data), and Module.create streams the byte ranges
// into the heap once.
//
// What is read: a Node file and a Blob by positional reads of the parts between the skipped
// ranges (a skipped range is never read); bytes in memory are scanned in place (no copy); a
// URL's body streams through once, the skipped ranges dropped unless keep(ref) asks for them
// (generation's read-ahead: the trained parameters). Anything that does not scan as an ONNX
// model, or a source of another kind (a Response, idb://, an onnxblock model), is read whole
// as before (readBytes), so that the core's parser says what is wrong with it.
//
// The fingerprint: the artifacts generated from such a base carry, in their metadata_props,
// the base file's size and a hash of its skeleton (`webtrain.base:<location>`); Module.create
// checks it before it streams the weights, so a base re-exported since (other offsets) is an
// error naming the file, not silently wrong weights.
import { WebtrainError } from './core.js';
import { concatBytes as concat, fnv1a, isBlob, isResponse, nodeFilePath, readBytes, sniff } from './bytes.js';
import { importNode } from './node-builtin.js';

/** Initializers with at least this many data bytes inside a model are referenced, not copied. */
export const INSIDE_MIN = 4096;
/** Weights inside a model are referenced from this many bytes of them on (or with keepExternalData: true). */
export const INSIDE_BY_REFERENCE = 32 * 2 ** 20;
/** A stream's first bytes kept to hand the model over as it is when it is not referenced. */
const RAW_KEPT = 2 * INSIDE_BY_REFERENCE;
/** Bytes read per positional read between skipped ranges (a tensor's header is far smaller). */
const PIECE = 64 * 1024;
const FINGERPRINT_KEY = 'webtrain.base:';

const utf8 = new TextDecoder();
const encoder = new TextEncoder();

class ScanError extends Error {}

/** A varint's bytes. */
function varint(v) {
  const out = [];
  for (; v >= 0x80; v = Math.floor(v / 128)) out.push((v % 128) | 0x80);
  out.push(v);
  return Uint8Array.from(out);
}
const lenField = (id, bytes) => [varint((id << 3) | 2), varint(bytes.byteLength), bytes];
const strEntry = (k, v) => {
  const parts = [...lenField(1, encoder.encode(k)), ...lenField(2, encoder.encode(v))];
  return concat(parts);
};
/** FNV-1a (32 bits) over pieces, as a hex string. */
const fnv = (parts) => fnv1a(parts).toString(16).padStart(8, '0');

/**
 * Reads a source forward: read(at, min) -> Uint8Array starting at byte `at` (at least `min`
 * bytes unless the source ends), or null at its end. A skip past the buffer is free for
 * positional sources (nothing read); a stream drops what it passes.
 */
class Cursor {
  constructor(src) {
    this.src = src;
    this.buf = new Uint8Array(0);
    this.start = 0;
    this.pos = 0;
  }
  get avail() {
    return this.start + this.buf.length - this.pos;
  }
  async ensure(n) {
    while (this.avail < n) {
      const have = this.start + this.buf.length;
      const c = await this.src.read(Math.max(have, this.pos), n - Math.max(this.avail, 0));
      if (!c || !c.length) return false;
      const keep = this.avail > 0 ? this.buf.subarray(this.pos - this.start) : null;
      this.buf = keep ? concat([keep, c]) : c;
      this.start = this.pos;
    }
    return true;
  }
  async byte() {
    if (!(await this.ensure(1))) throw new ScanError(`ends at byte ${this.pos}`);
    return this.buf[this.pos++ - this.start];
  }
  /** A varint: its value (exact below 2^53) and its bytes. */
  async varint() {
    const bytes = [];
    let v = 0;
    for (let scale = 1; ; scale *= 128) {
      const b = await this.byte();
      bytes.push(b);
      v += (b & 0x7f) * scale;
      if (b < 0x80) break;
      if (bytes.length >= 10) throw new ScanError(`a varint longer than 10 bytes at byte ${this.pos}`);
    }
    return { v, bytes: Uint8Array.from(bytes) };
  }
  /** n bytes, copied. */
  async take(n) {
    if (this.src.size !== undefined && this.pos + n > this.src.size) throw new ScanError(`a field of ${n} bytes at byte ${this.pos} runs past the end (${this.src.size} bytes)`);
    if (n > 2 ** 31) throw new ScanError(`a field of ${n} bytes at byte ${this.pos}`);
    const out = new Uint8Array(n);
    for (let done = 0; done < n;) {
      if (!(await this.ensure(1))) throw new ScanError(`ends at byte ${this.pos}, inside a field of ${n} bytes`);
      const k = Math.min(n - done, this.avail);
      out.set(this.buf.subarray(this.pos - this.start, this.pos - this.start + k), done);
      this.pos += k;
      done += k;
    }
    return out;
  }
  skip(n) {
    this.pos += n;
  }
}

/** One field (its tag read): [header bytes, value bytes] copied. */
async function copyField(c, tag, end) {
  const wire = tag.v & 7;
  if (wire === 0) return [tag.bytes, (await c.varint()).bytes];
  if (wire === 1 || wire === 5) return [tag.bytes, await c.take(wire === 1 ? 8 : 4)];
  if (wire !== 2) throw new ScanError(`wire type ${wire} at byte ${c.pos}`);
  const len = await c.varint();
  if (c.pos + len.v > end) throw new ScanError(`a field of ${len.v} bytes at byte ${c.pos} runs past its message`);
  return [tag.bytes, len.bytes, await c.take(len.v)];
}

/** Reads fields up to `end`, fn(tag, end) -> parts or null (copy the field as it is). */
async function fields(c, end, fn) {
  const parts = [];
  while (c.pos < end) {
    if (end === Infinity && !(await c.ensure(1))) break;
    const tag = await c.varint();
    if (tag.v >= 2 ** 32 || tag.v >>> 3 === 0) throw new ScanError(`field number 0 at byte ${c.pos}`);
    parts.push(...((await fn(tag, end)) ?? (await copyField(c, tag, end))));
  }
  if (end !== Infinity && c.pos !== end) throw new ScanError(`a message overruns its length at byte ${c.pos}`);
  return parts;
}

/** A length-delimited submessage read by fn into parts: [tag, new length, ...parts]. */
async function nested(c, tag, end, fn) {
  const len = await c.varint();
  const stop = c.pos + len.v;
  if (stop > end) throw new ScanError(`a message of ${len.v} bytes at byte ${c.pos} runs past its parent`);
  const inner = await fn(stop);
  return [tag.bytes, varint(inner.reduce((a, p) => a + p.byteLength, 0)), ...inner];
}

const FLOAT = 1;

/** A TensorProto: its big raw_data (or packed float_data) skipped, external_data entries appended. */
async function tensor(c, end, scan) {
  let name = '';
  let dtype = 0;
  let ref = null;
  const parts = await fields(c, end, async (tag, stop) => {
    const id = tag.v >>> 3;
    const wire = tag.v & 7;
    if (id === 2 && wire === 0) {
      const v = await c.varint();
      dtype = v.v;
      return [tag.bytes, v.bytes];
    }
    if (id === 8 && wire === 2) {
      const [t, l, b] = await copyField(c, tag, stop);
      name = utf8.decode(b);
      return [t, l, b];
    }
    if (id === 14 && wire === 0 && ref) throw new ScanError(`tensor '${name}' has data inside and a data_location`);
    if (id === 13 && ref) throw new ScanError(`tensor '${name}' has data inside and external_data`);
    if (!(wire === 2 && (id === 9 || (id === 4 && dtype === FLOAT))) || ref) return null;
    const len = await c.varint();
    if (c.pos + len.v > stop) throw new ScanError(`tensor '${name}': ${len.v} data bytes at byte ${c.pos} run past it`);
    if (len.v < INSIDE_MIN) return [tag.bytes, len.bytes, await c.take(len.v)];
    if (scan.size !== undefined && c.pos + len.v > scan.size) {
      throw new WebtrainError(`${scan.what}: tensor '${name}' has ${len.v} bytes at offset ${c.pos}, past the file's end (${scan.size} bytes): the file is truncated (copy or download it again)`);
    }
    ref = { tensor: name, offset: c.pos, length: len.v, dtype };
    if (scan.keep?.(ref)) scan.kept.set(`${ref.offset}:${ref.length}`, await c.take(len.v));
    else c.skip(len.v);
    return [];
  });
  if (!ref) return parts;
  scan.refs.push(ref);
  const entries = [['location', scan.location], ['offset', String(ref.offset)], ['length', String(ref.length)]];
  return [...parts, ...entries.flatMap(([k, v]) => lenField(13, strEntry(k, v))), varint((14 << 3) | 0), varint(1)];
}

/** The skeleton of a ModelProto (model -> graph -> initializer). */
async function model(c, scan) {
  return fields(c, Infinity, (tag, end) => {
    if (tag.v !== ((7 << 3) | 2)) return null;
    return nested(c, tag, end, (stop) => fields(c, stop, (t, e) => (t.v === ((5 << 3) | 2) ? nested(c, t, e, (s) => tensor(c, s, scan)) : null)));
  });
}

/** A location for the model file: its name when it is one a location may be, else 'model.onnx'. */
function locationOf(name) {
  const base = (name ?? '').split(/[/\\]/).pop();
  return base && base !== '.' && base !== '..' && !base.includes(':') ? base : 'model.onnx';
}

/** A source scanned in place: { src, location, data (what reads the file again), stream }, or null (read whole). */
async function open(source) {
  if (source instanceof Uint8Array || source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    const b = source instanceof Uint8Array ? source : ArrayBuffer.isView(source) ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength) : new Uint8Array(source);
    return inMemory(b, 'model.onnx');
  }
  if (isResponse(source)) {
    // a Response of an http(s) URL streams (and is fetched again to read the weights); another
    // (made from bytes, or already read) is read whole (readBytes says what is wrong with it)
    if (!source.ok || source.bodyUsed || !/^https?:/i.test(source.url ?? '')) return null;
    return streamed(source, source.url);
  }
  if (isBlob(source)) {
    const read = async (at, min) => (at < source.size ? new Uint8Array(await source.slice(at, Math.min(source.size, at + Math.max(min, PIECE))).arrayBuffer()) : null);
    const what = typeof source.name === 'string' && source.name ? `File '${source.name}'` : `a Blob of ${source.size} bytes`;
    return { src: { size: source.size, read }, location: locationOf(source.name), data: source, what, hint: 'check the file chosen' };
  }
  if (typeof source !== 'string' && !(source instanceof URL)) return null;
  const s = source instanceof URL ? source.href : source;
  if (s.startsWith('idb:')) return null;
  const path = await nodeFilePath(s);
  if (path !== null) {
    const fs = await importNode('fs/promises');
    const fh = await fs.open(path, 'r').catch(() => null); // readBytes says why
    if (!fh) return null;
    const st = await fh.stat();
    if (!st.isFile()) {
      await fh.close();
      return null;
    }
    const { size } = st;
    const read = async (at, min) => {
      if (at >= size) return null;
      const buf = new Uint8Array(Math.min(size - at, Math.max(min, PIECE)));
      const { bytesRead } = await fh.read(buf, 0, buf.length, at);
      return buf.subarray(0, bytesRead);
    };
    return { src: { size, read, close: () => fh.close() }, location: locationOf(path), data: s, what: `file '${path}'`, hint: 'check the path' };
  }
  let res;
  try {
    res = await fetch(new URL(s, globalThis.location?.href));
  } catch {
    return null; // readBytes says why
  }
  if (!res.ok || !res.body) return null;
  return streamed(res, s);
}

/** Bytes in memory, scanned in place. */
const inMemory = (b, location) => ({ src: { size: b.byteLength, read: async (at) => (at < b.byteLength ? b.subarray(at) : null) }, location, data: b, whole: b, what: 'the model bytes', hint: 'check what was passed' });

/** A fetch Response's body, streamed once; its first RAW_KEPT bytes kept (the model as it is, if it is not to be referenced). */
function streamed(res, s) {
  const it = res.body.getReader();
  let raw = [];
  let rawBytes = 0;
  let pos = 0;
  const read = async (at) => {
    for (;;) {
      const { done, value } = await it.read();
      if (done) return null;
      const from = pos;
      pos += value.byteLength;
      if (raw && (rawBytes += value.byteLength) <= RAW_KEPT) raw.push(value);
      else raw = null;
      if (pos > at) return value.subarray(at - from);
    }
  };
  const length = res.headers.get('content-length');
  const url = res.url || new URL(s, globalThis.location?.href).href;
  return {
    src: { size: length === null ? undefined : Number(length), read, close: () => it.cancel().catch(() => {}) },
    // the whole model as it is, read to its end (null past RAW_KEPT bytes: fetched again)
    whole: async () => {
      while (raw) {
        const { done, value } = await it.read();
        if (done) break;
        if ((rawBytes += value.byteLength) <= RAW_KEPT) raw.push(value);
        else raw = null;
      }
      return raw && concat(raw);
    },
    location: locationOf(decodeURIComponent(new URL(url).pathname)),
    data: url,
    stream: true,
    what: `'${url}'`,
    hint: `check the URL (HTTP status ${res.status} from ${url})`,
  };
}

/**
 * A model source -> { bytes, inside } where bytes is what the core parses. inside is null (bytes:
 * the model as it is) when its initializers of INSIDE_MIN bytes or more add up to less than
 * INSIDE_BY_REFERENCE, unless `force` (keepExternalData: true given): small models keep
 * self-contained artifacts. Else { location, refs: [{ tensor, offset, length, dtype }], size,
 * hash, data, what, kept } with bytes the skeleton: `data` reads the model file again (its path,
 * URL, Blob or bytes) and `kept` (a stream) holds the ranges keep(ref) asked for.
 */
export async function scanModel(source, { keep = null, location = null, force = false } = {}) {
  const o = (await open(source).catch(() => null)) ?? inMemory(await readBytes(source), 'model.onnx');
  const scan = { location: location ?? o.location, refs: [], kept: new Map(), keep: o.stream ? keep : null, size: o.src.size, what: o.what };
  const c = new Cursor(o.src);
  let parts;
  try {
    await c.ensure(512); // (false for a shorter model: what there is was read)
    sniff(c.buf.subarray(0, 512), o.what, o.hint);
    parts = await model(c, scan);
  } catch (err) {
    if (!(err instanceof ScanError)) {
      await o.src.close?.();
      throw err;
    }
    parts = null;
  }
  const referenced = scan.refs.reduce((a, r) => a + r.length, 0);
  if (!parts || !scan.refs.length || (referenced < INSIDE_BY_REFERENCE && !force)) {
    // as it is: the core reads it (and says what is wrong with it)
    const whole = typeof o.whole === 'function' ? await o.whole() : o.whole;
    await o.src.close?.();
    return { bytes: whole ?? (await readBytes(source)), inside: null };
  }
  await o.src.close?.();
  const inside = { location: scan.location, refs: scan.refs, size: c.pos, hash: fnv(parts), data: o.data, what: o.what, kept: o.stream ? scan.kept : null };
  return { bytes: concat(parts), inside };
}

/** The fingerprint entry for a base file: metadata_props (ModelProto field 14) to append to a model. */
export function fingerprintField(inside) {
  return concat(lenField(14, strEntry(FINGERPRINT_KEY + inside.location, `${inside.size} ${inside.hash}`)));
}

/** The fingerprints a model's metadata_props hold: Map location -> { size, hash }. */
export function fingerprints(bytes) {
  const out = new Map();
  const walk = (b, fn) => {
    let at = 0;
    const v = () => {
      let x = 0;
      for (let s = 1; at < b.length; s *= 128) {
        const k = b[at++];
        x += (k & 0x7f) * s;
        if (k < 0x80) return x;
      }
      return -1;
    };
    while (at < b.length) {
      const tag = v();
      const wire = tag & 7;
      if (tag < 0) return;
      if (wire === 0) v();
      else if (wire === 1 || wire === 5) at += wire === 1 ? 8 : 4;
      else if (wire === 2) {
        const n = v();
        if (n < 0 || at + n > b.length) return;
        fn(tag >>> 3, b.subarray(at, at + n));
        at += n;
      } else return;
    }
  };
  walk(bytes, (id, payload) => {
    if (id !== 14) return;
    const kv = {};
    walk(payload, (k, s) => (kv[k] = utf8.decode(s)));
    if (!kv[1]?.startsWith(FINGERPRINT_KEY)) return;
    const [size, hash] = (kv[2] ?? '').split(' ');
    out.set(kv[1].slice(FINGERPRINT_KEY.length), { size: Number(size), hash });
  });
  return out;
}

/**
 * Checks that a base file (an openSide source) is the one the artifacts were generated from:
 * its size, and (random-access sources) its skeleton's hash. Throws naming the file.
 */
export async function checkFingerprint(side, location, want) {
  const changed = (what) => new WebtrainError(`${side.what}, the model file the artifacts refer to as '${location}' for its weights, is not the one they were generated from (${what}): it changed since; generate the artifacts again from it`);
  if (side.size !== undefined && side.size !== want.size) throw changed(`${side.size} bytes, generated from ${want.size}`);
  if (!side.read) return; // a stream: its size only (reading it twice would fetch it twice)
  const src = {
    size: side.size,
    read: async (at, min) => {
      if (at >= side.size) return null;
      const buf = new Uint8Array(Math.min(side.size - at, Math.max(min, PIECE)));
      await side.read(at, buf);
      return buf;
    },
  };
  const scan = { location, refs: [], kept: new Map(), keep: null };
  let parts;
  try {
    parts = await model(new Cursor(src), scan);
  } catch (err) {
    if (!(err instanceof ScanError)) throw err;
    throw changed(`it no longer reads as an ONNX model: ${err.message}`);
  }
  const hash = fnv(parts);
  if (hash !== want.hash) throw changed(`its tensors' names, shapes or places differ: fingerprint ${hash}, generated from ${want.hash}`);
}

