// External data: the side files of a model saved with external data (model.onnx beside
// model.onnx.data, as onnx.save_model(..., save_as_external_data=True) and PyTorch write
// anything near 2 GB), for every entry point that parses a model (generateArtifacts,
// Module.create, Optimizer.create, InferenceSession.create, onnxblock.buildModel, the CLI).
//
// Where a side file named by a tensor's `location` comes from, first match wins:
//   1. the `externalData: [{ path, data }]` option (onnxruntime-web's): `data` a Uint8Array,
//      ArrayBuffer, typed array, Blob/File, URL, or a path (Node) / URL string;
//   2. beside the model: a Node path or file: URL -> the file in the model's directory; a URL
//      -> fetched relative to the model's URL;
//   3. otherwise (a model given as bytes) an error naming the tensor, the file and the option.
// The C core checks every location (relative, inside the model's directory: no absolute path,
// '..', '\' or ':') before asking for it (src/io/onnx_external.c).
//
// Design (memory: weights held once): the core parses the model synchronously
// and, for each external tensor, calls back into JS (Module.wtReadExternal, set only around
// that call) with the tensor's own freshly allocated heap buffer; the bytes are written there
// directly. From a Node file that is fs.readSync into the heap: no JS copy of the side file at
// all. Sources that cannot be read synchronously (a URL, a Blob) are fetched before the parse:
// a Blob only the byte ranges the model's tensors reference (the core lists them without
// parsing: wtw_external_list), a URL whole (HTTP range requests are later work). Those JS bytes
// live only until the parse returns.
//
// An externalData entry that no tensor of the model(s) references is an error (a typo in a
// path would otherwise surface as a missing file, or not at all).
//
// Artifacts by reference (weights held once): generateArtifacts keeps a base's frozen
// weights in its side files, and the training and eval models it returns refer to them. Those
// returned bytes remember where the base came from (rememberSource: its path or URL and its
// externalData entries), so that Module.create / InferenceSession.create on them find the side
// files as they would beside the base, with no option; written to an artifactDirectory, the side
// files are placed beside the artifacts (placeSideFiles: a hard link, else a copy).
import { WebtrainError } from './core.js';
import { fnv1a } from './bytes.js';
import { describe, isBlob, isBytes, locationOf, memorySource, nodeFilePath, openSource, u8Of, whyUnreadable, wholeOf } from './source.js';
import { importNode, isNode } from './node-builtin.js';
import { fillSegments, openSide } from './checkpoint-data.js';
import { checkFingerprint, recordOfBytes } from './inside.js';

const DATA = 'a Uint8Array, ArrayBuffer, Blob, File, URL or path';

/** A location as models and the option spell it: without leading './'. */
const normal = (p) => p.replace(/^(\.\/)+/, '');

const hint = (loc) => `pass it with externalData: [{ path: '${loc}', data }]`;

/**
 * Checks an `externalData` option (undefined, or an array of { path, data }); returns the
 * entries with normalized paths. TypeError for what is not.
 */
export function externalDataOption(value, context) {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new TypeError(`${context}: externalData: expected an array of { path, data }; got ${describe(value)}`);
  const seen = new Set();
  return value.map((e, i) => {
    const at = `${context}: externalData[${i}]`;
    if (typeof e !== 'object' || e === null) throw new TypeError(`${at}: expected { path, data }; got ${describe(e)}`);
    if (typeof e.path !== 'string' || !e.path) throw new TypeError(`${at}.path: expected the file name the model's tensors give as their location (a non-empty string); got ${describe(e.path)}`);
    const d = e.data;
    const ok = isBytes(d) || isBlob(d) || d instanceof URL || typeof d === 'string';
    if (!ok) throw new TypeError(`${at} ('${e.path}').data: expected ${DATA}; got ${describe(d)}`);
    const path = normal(e.path);
    if (seen.has(path)) throw new WebtrainError(`${at}: '${e.path}' is given twice`);
    seen.add(path);
    return { path, data: d };
  });
}

/** Model bytes returned by generateArtifacts -> { model, entries }: the base they refer to. */
const sources = new WeakMap();
/**
 * The same by content, for copies of those bytes (a worker() sends them back to the worker as a
 * new array): only bases named by path or URL, or given as a Blob or File (a handle; no bytes
 * given are kept alive). A content seen with two different bases, or with one given as bytes, is
 * ambiguous for good (null: a copy must say where its side files are, with externalData).
 */
const byContent = new Map();
const CONTENT_MAX = 2 ** 20;

/** length and FNV-1a of bytes: a key for small generated models. */
function contentKey(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength > CONTENT_MAX) return null;
  return `${bytes.length}:${fnv1a([bytes])}`;
}

/** Records that `bytes` (a generated model) refers to the side files of `model` / `entries`. */
export function rememberSource(bytes, model, entries) {
  if (!bytes) return;
  sources.set(bytes, { model, entries });
  const key = contentKey(bytes);
  if (key === null) return;
  const nameable = keepable(model) !== null && entries.every((e) => keepable(e.data) !== null);
  const named = nameable ? { model: keepable(model), entries: entries.map((e) => ({ path: e.path, data: keepable(e.data) })) } : null;
  const seen = byContent.get(key);
  byContent.set(key, seen === undefined || (seen && named && same(seen, named)) ? named : null);
}

/** What a copy may be known by: a path or URL, or a Blob / File (a handle: its bytes are not copied). */
const keepable = (v) => locationOf(v) ?? (isBlob(v) ? v : null);
const same = (a, b) => a.model === b.model && a.entries.length === b.entries.length && a.entries.every((e, i) => e.path === b.entries[i].path && e.data === b.entries[i].data);

/**
 * The base generated model bytes refer to (by identity, else by content), or undefined. By
 * content only for a model given as bytes: one read from a path or URL has its own folder, which
 * wins (a copy of the artifacts beside another base must not read the first base's weights).
 */
const recall = (source, bytes) => {
  for (const o of [source, bytes]) if (o && typeof o === 'object' && sources.has(o)) return sources.get(o);
  if (locationOf(source) !== null || (typeof source?.url === 'string' && source.url)) return undefined;
  for (const o of [source, bytes]) {
    const key = contentKey(o);
    if (key !== null && byContent.get(key)) return byContent.get(key);
  }
  return undefined;
};

/** Where the side files of a model given as `model` (with the option's `entries`) are: { model, entries }. */
export function sourceOf(model, entries, bytes) {
  const from = recall(model, bytes);
  if (!from) return { model, entries };
  const given = new Set(entries.map((e) => e.path));
  return { model: from.model, entries: [...entries, ...from.entries.filter((e) => !given.has(e.path))] };
}

/** Where the model's side files are: { dir } (Node), { url }, or null (bytes, a Blob). */
async function baseOf(model) {
  let s = locationOf(model) ?? (typeof model?.url === 'string' && model.url && typeof model.status === 'number' ? model.url : null);
  if (s === null) return null;
  const file = await nodeFilePath(s);
  if (file !== null) {
    const path = await importNode('path');
    return { dir: path.dirname(path.resolve(file)) };
  }
  try {
    s = new URL(s, globalThis.location?.href).href;
  } catch {
    return null;
  }
  return /^(https?|file):/i.test(s) ? { url: s } : null; // blob: and data: URLs have no folder
}

/** A side file in memory (bytes given, or fetched before the parse). */
class Bytes {
  constructor(u8, what) {
    this.u8 = u8;
    this.what = what;
    this.size = u8.byteLength;
  }
  read(heap, dst, offset, length) {
    heap.set(this.u8.subarray(offset, offset + length), dst);
  }
}

/** Byte ranges of a side file read before the parse (the ones the tensors to be read reference). */
export class Ranges {
  constructor(what, size) {
    this.what = what;
    this.size = size;
    this.ranges = new Map(); // `${offset}:${length}` -> Uint8Array
  }
  read(heap, dst, offset, length) {
    const u8 = this.ranges.get(`${offset}:${length}`);
    if (!u8) throw new WebtrainError(`${this.what}: bytes ${offset}..${offset + length} were not read ahead (a tensor outside the graph's initializers)`);
    heap.set(u8, dst);
  }
}

/** The byte ranges of a Blob the tensors reference, read before the parse. */
class BlobRanges extends Ranges {
  constructor(blob, what) {
    super(what, blob.size);
    this.blob = blob;
  }
  async fetch(refs) {
    for (const r of refs) {
      const key = `${r.offset}:${r.length}`;
      if (this.ranges.has(key) || r.offset + r.length > this.size) continue; // past its end: read() says so
      this.ranges.set(key, new Uint8Array(await this.blob.slice(r.offset, r.offset + r.length).arrayBuffer()));
    }
  }
}

/**
 * A Blob or a URL read after the parse (a deferred reader's): the tensors' byte ranges go
 * straight into their heap buffers (openSide: Blob slices; a fetch body streamed).
 */
class Later {
  constructor(source, what, size) {
    this.source = source; // a Blob, or a URL string
    this.what = what;
    this.size = size; // undefined for a URL: checked as its body streams
    this.later = true;
  }
  side() {
    return openSide(this.source, 'external data');
  }
}


/** A file in Node, read synchronously into the heap (opened on first use, closed after the parse). */
class NodeFile {
  constructor(fs, path, what, missing = '') {
    this.fs = fs;
    this.path = path;
    this.what = what;
    this.missing = missing; // what to do when it is not there
    this.fd = null;
  }
  open() {
    if (this.fd !== null) return;
    try {
      this.fd = this.fs.openSync(this.path, 'r');
      this.size = this.fs.fstatSync(this.fd).size;
    } catch (err) {
      this.close();
      throw new WebtrainError(`cannot read ${this.what} '${this.path}': ${whyUnreadable(err)}${err.code === 'ENOENT' ? this.missing : ''}`);
    }
  }
  read(heap, dst, offset, length) {
    for (let done = 0; done < length;) {
      const n = this.fs.readSync(this.fd, heap, dst + done, Math.min(length - done, 1 << 30), offset + done);
      if (n <= 0) throw new WebtrainError(`${this.what} '${this.path}' ended at byte ${offset + done} while reading`);
      done += n;
    }
  }
  close() {
    if (this.fd !== null) this.fs.closeSync(this.fd);
    this.fd = null;
  }
  /** As an openSide source (a deferred reader's), reading from the open file. */
  side() {
    return {
      what: `${this.what} '${this.path}'`,
      size: this.size,
      read: async (off, view) => {
        for (let done = 0; done < view.byteLength;) {
          const n = this.fs.readSync(this.fd, view, done, view.byteLength - done, off + done);
          if (n <= 0) throw new WebtrainError(`${this.what} '${this.path}' ended at byte ${off + done} while reading`);
          done += n;
        }
      },
    };
  }
}

/**
 * A URL's side file read before the parse: fetched, and with `refs` (the ranges that will be
 * read) its body streamed keeping only those ranges (no copy of the whole file in JS).
 */
async function fetchWhole(url, what, refs = null) {
  const src = await openSource(url, { kind: what });
  const type = src.response.headers.get('content-type') ?? '';
  if (/text\/html/i.test(type)) {
    await src.close();
    throw new WebtrainError(`${what} '${url}' is an HTML page (content-type '${type}'), not tensor data: check that it is served there`);
  }
  if (!refs || !src.response.body) return new Bytes(await wholeOf(src), `${what} ${src.what}`);
  const res = src.response;
  const ranges = new Ranges(`${what} '${res.url || url}'`);
  const want = [...new Map(refs.map((r) => [`${r.offset}:${r.length}`, { ...r, u8: new Uint8Array(r.length) }])).values()];
  let pos = 0;
  for await (const chunk of res.body) {
    const end = pos + chunk.byteLength;
    for (const r of want) {
      const from = Math.max(r.offset, pos);
      const to = Math.min(r.offset + r.length, end);
      if (to > from) r.u8.set(chunk.subarray(from - pos, to - pos), from - r.offset);
    }
    pos = end;
  }
  ranges.size = pos;
  for (const r of want) if (r.offset + r.length <= pos) ranges.ranges.set(`${r.offset}:${r.length}`, r.u8);
  return ranges;
}

/** The tensors a model (bytes in memory) keeps in side files: [{ tensor, location, offset, length, dtype }]. */
function listExternal(core, bytes) {
  const record = recordOfBytes(core, bytes);
  try {
    return record.external();
  } finally {
    record.free();
  }
}

/** The bytes of the key base files' fingerprints are stored under (WT_BASE_PRINT_KEY). */
const PRINT_KEY = new TextEncoder().encode('webtrain.base:');

/** Whether bytes hold PRINT_KEY: only then is a model's record read for its fingerprints. */
function mayCarryPrints(b) {
  for (let i = b.indexOf(PRINT_KEY[0]); i >= 0 && i + PRINT_KEY.length <= b.length; i = b.indexOf(PRINT_KEY[0], i + 1)) {
    let k = 1;
    while (k < PRINT_KEY.length && b[i + k] === PRINT_KEY[k]) k++;
    if (k === PRINT_KEY.length) return true;
  }
  return false;
}

/**
 * The reader of one model's side files; run(fn) makes it the core's during fn. A deferred reader
 * (Module.create's) checks each tensor's range during the parse but moves the bytes of files,
 * Blobs and URLs afterwards, in fill(): into the buffers the core allocated for them, in pieces,
 * with progress; nothing else reads those buffers before (a module plans at its first step).
 */
class Reader {
  constructor(core, files, fallback, deferred = false, prints = new Map()) {
    this.core = core;
    this.prints = prints; // location -> { size, hash }: base files with their weights inside (js/inside.js)
    this.files = files; // normalized location -> Bytes | BlobRanges | NodeFile | Later
    this.fallback = fallback; // location -> a file object, or throws the error for a missing one
    this.pending = deferred ? [] : null; // [{ f, offset, bytes, ptr }]
  }

  /** fn() (a synchronous call into the core that parses the model) with this reader set. */
  run(fn) {
    const m = this.core.m;
    m.wtReadExternal = (locPtr, offset, length, dst) => {
      try {
        this.#read(this.core.string(locPtr), offset, length, dst);
        return 0;
      } catch (err) {
        return this.core.cstring(err?.message ?? String(err)); // the core takes and frees it
      }
    };
    let ok = false;
    try {
      const r = fn();
      ok = true;
      return r;
    } finally {
      delete m.wtReadExternal;
      if (!ok || !this.pending?.length) this.close();
    }
  }

  close() {
    for (const f of this.files.values()) f.close?.();
  }

  /** Bytes a deferred reader still has to move (fill). */
  get pendingBytes() {
    return (this.pending ?? []).reduce((a, p) => a + p.bytes, 0);
  }

  /**
   * Moves the bytes a deferred run left pending into their buffers; onProgress({ loaded,
   * total }) as they land (loaded counted from `base`, out of `total`). Closes the files.
   */
  async fill(onProgress, base = 0, total = this.pendingBytes) {
    let before = base;
    try {
      // a model file holding the weights must be the one the artifacts were generated from
      const locs = new Map([...this.files].map(([loc, f]) => [f, loc]));
      const check = (f, side) => (this.prints.has(locs.get(f)) ? checkFingerprint(this.core, side, locs.get(f), this.prints.get(locs.get(f))) : null);
      for (const f of this.files.values()) if (f.u8) await check(f, memorySource(f.u8, f.what));
      for (const f of new Set(this.pending.map((p) => p.f))) {
        const mine = this.pending.filter((p) => p.f === f).sort((a, b) => a.offset - b.offset);
        // the same range twice (two initializers of one tensor's bytes): read once, then copied
        const segs = [];
        const twins = [];
        for (const p of mine) {
          const prev = segs.at(-1);
          if (prev && prev.offset === p.offset && prev.bytes === p.bytes) twins.push([p, prev]);
          else if (prev && p.offset < prev.offset + prev.bytes) throw new WebtrainError(`${f.what}: two tensors overlap in it (bytes ${p.offset}..${prev.offset + prev.bytes})`);
          else segs.push(p);
        }
        const side = await f.side();
        await check(f, side);
        const start = before;
        await fillSegments(this.core, segs, side, `the model's tensors`, onProgress && ((p) => onProgress({ loaded: start + p.loaded, total })));
        for (const [p, from] of twins) this.core.heap.copyWithin(p.ptr, from.ptr, from.ptr + p.bytes);
        before += segs.reduce((a, s) => a + s.bytes, 0);
        await side.close?.();
      }
      this.pending.length = 0;
    } finally {
      this.close();
    }
  }

  #read(location, offset, length, dst) {
    const loc = normal(location);
    let f = this.files.get(loc);
    if (!f) this.files.set(loc, (f = this.fallback(loc)));
    f.open?.();
    if (f.size !== undefined && offset + length > f.size) {
      throw new WebtrainError(`${f.path ? `${f.what} '${f.path}'` : f.what} has ${f.size} bytes, but the tensor's ${length} bytes at offset ${offset} run past its end (a truncated file, or one that belongs to another model)`);
    }
    if (this.pending && f.side) this.pending.push({ f, offset, bytes: length, ptr: dst });
    else f.read(this.core.heap, dst, offset, length);
  }
}

/**
 * Readers for the models of one call, [{ model: the source given, bytes }] -> [Reader], after
 * fetching what must be read ahead; `entries` from externalDataOption. Throws when an entry is
 * referenced by none of the models. deferred: readers that move the bytes after the parse
 * (Reader.fill). readAhead(ref): which tensors of a URL's or Blob's side file will be read
 * (generation by reference reads a few); the others are not fetched into memory.
 */
export async function externalReaders(core, models, entries, context, { deferred = false, readAhead = null } = {}) {
  const fs = isNode ? await importNode('fs') : null;
  const join = isNode ? (await importNode('path')).join : null;
  const given = new Map(entries.map((e) => [e.path, e.data]));
  const used = new Set();
  const readers = [];
  const listed = [];
  for (const { model: source, bytes, record } of models) {
    // generated artifacts: their side files are the base's (the option's entries win)
    const from = recall(source, bytes);
    const model = from ? from.model : source;
    const inherited = new Map((from?.entries ?? []).filter((e) => !given.has(e.path)).map((e) => [e.path, e.data]));
    const base = await baseOf(model);
    // A model in the heap already (a record) says what it references; bytes in memory are copied
    // in (briefly) only where that tells something: entries to check or read ahead, side files to
    // fetch from a URL, the fingerprints of a base holding its weights inside (js/inside.js).
    const list = entries.length || inherited.size || (base?.url && !deferred);
    const own = record ?? (list || (deferred && mayCarryPrints(bytes)) ? recordOfBytes(core, bytes) : null);
    let refs = [];
    let prints = new Map();
    try {
      if (own && list) refs = own.external();
      if (own && deferred) prints = own.prints();
    } finally {
      if (own !== record) own?.free();
    }
    listed.push(refs);
    const files = new Map();
    for (const [path, data] of [...given, ...inherited]) {
      const mine = refs.filter((r) => r.location === path);
      if (!mine.length) continue;
      if (given.has(path)) used.add(path);
      const model = !given.has(path) && prints.has(path); // the base's own file, not an option's side file
      const what = model ? 'the base model file' : `externalData '${path}'`;
      files.set(path, await fromData(fs, data, readAhead ? mine.filter(readAhead) : mine, what, deferred, !!readAhead, model ? ` (the artifacts refer to it for the base's weights): put it back or ${hint(path)}` : ''));
    }
    if (base?.url && !deferred) {
      for (const loc of new Set(refs.map((r) => r.location))) {
        if (files.has(loc)) continue;
        const url = new URL(loc.split('/').map(encodeURIComponent).join('/'), base.url).href;
        const mine = refs.filter((r) => r.location === loc);
        files.set(loc, await fetchWhole(url, `external data file`, readAhead && mine.filter(readAhead)).catch((err) => {
          const first = refs.find((r) => r.location === loc);
          throw new WebtrainError(`${context}: tensor '${first.tensor}' is stored in external file '${loc}': ${err.message}; fetch it yourself and ${hint(loc)}`);
        }));
      }
    }
    const fallback = (loc) => {
      if (base?.dir) return new NodeFile(fs, join(base.dir, loc), 'external data file', ` (side files are looked for beside the model): put it there or ${hint(loc)}`);
      if (base?.url && deferred) return new Later(new URL(loc.split('/').map(encodeURIComponent).join('/'), base.url).href, 'external data file', undefined);
      const why = base?.url ? 'it was not among the files read ahead' : 'the model was given as bytes (not a path or URL), so there is no folder to find it in';
      throw new WebtrainError(`external file '${loc}' is not available: ${why}; ${hint(loc)}`);
    };
    readers.push(new Reader(core, files, fallback, deferred, deferred ? prints : undefined));
  }
  const unused = entries.filter((e) => !used.has(e.path));
  if (unused.length) {
    const all = [...new Set(listed.flat().map((r) => `'${r.location}'`))];
    throw new WebtrainError(`${context}: externalData '${unused[0].path}' is not referenced by the model (${all.length ? `its tensors are stored in ${all.join(', ')}` : 'it stores no tensor externally'}): check the path`);
  }
  return readers;
}

/** An externalData entry's data as a file object (Blobs: the ranges `refs` need, read now unless deferred). */
async function fromData(fs, data, refs, what, deferred = false, someRanges = false, missing = '') {
  if (data instanceof Ranges || data instanceof Bytes) return data; // read ahead already (js/inside.js)
  if (isBytes(data)) return new Bytes(u8Of(data), what);
  if (isBlob(data) && deferred) return new Later(data, what, data.size);
  if (isBlob(data)) {
    const b = new BlobRanges(data, what);
    await b.fetch(refs);
    return b;
  }
  const s = data instanceof URL ? data.href : data;
  const path = await nodeFilePath(s);
  if (path !== null) return new NodeFile(fs, path, what, missing);
  if (deferred) return new Later(new URL(s, globalThis.location?.href).href, what, undefined);
  return fetchWhole(new URL(s, globalThis.location?.href).href, what, someRanges ? refs : null);
}

/** fn() with `reader` set when there is one (callers that read no model with it pass null). */
export const withReader = (reader, fn) => (reader ? reader.run(fn) : fn());

/**
 * Puts the side files that generated models (`models`: bytes returned by generateArtifacts)
 * refer to into Node directory `dir`, under the locations the models name: a hard link to the
 * base's file where the file system allows, else a copy (never read into memory). A file that is
 * there already (the artifacts beside the base) is left.
 */
export async function placeSideFiles(core, dir, models, reserved = []) {
  const fs = await importNode('fs/promises');
  const path = await importNode('path');
  const done = new Set();
  for (const bytes of models) {
    const from = bytes && recall(bytes, bytes);
    if (!from) continue;
    const base = await baseOf(from.model);
    for (const loc of new Set(listExternal(core, bytes).map((r) => r.location))) {
      if (reserved.includes(loc)) {
        throw new WebtrainError(`artifactDirectory: the base model file '${loc}', which the artifacts refer to for its weights, has the same name as an artifact written there: rename the base file or give a prefix`);
      }
      if (done.has(loc)) continue;
      done.add(loc);
      const dest = path.resolve(dir, loc);
      const entry = from.entries.find((e) => e.path === loc);
      const named = entry ? locationOf(entry.data) : null;
      const src = entry ? (named === null ? null : await nodeFilePath(named)) : base?.dir ? path.join(base.dir, loc) : null;
      await fs.mkdir(path.dirname(dest), { recursive: true });
      if (src !== null) {
        // the same file already (the artifacts beside the base, or a folder linked to it): left as it is
        const [a, b] = await Promise.all([fs.stat(src).catch(() => null), fs.stat(dest).catch(() => null)]);
        if (path.resolve(src) === dest || (a && b && a.dev === b.dev && a.ino === b.ino)) continue;
        await fs.rm(dest, { force: true });
        await fs.link(src, dest).catch(() => fs.copyFile(src, dest));
      } else if (entry && isBytes(entry.data)) {
        await fs.writeFile(dest, u8Of(entry.data));
      } else if (entry && isBlob(entry.data)) {
        const fh = await fs.open(dest, 'w');
        try {
          for await (const chunk of entry.data.stream()) await fh.write(chunk);
        } finally {
          await fh.close();
        }
      } else {
        throw new WebtrainError(`artifactDirectory: the artifacts refer to external data file '${loc}' of the base model, which is not a local file here: put it beside the artifacts yourself, or generate with keepExternalData: false`);
      }
    }
  }
}
