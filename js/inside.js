// A model source into the core, and the record of what it holds (src/io/onnx_scan.h): the C
// reader is the only one that reads protobuf; this module moves bytes.
//
// Models with their weights inside the .onnx file (how torch.onnx.export saves anything under
// 2 GB) are held once, like a base saved with external data: the source streams through the
// core's scanner a fixed window at a time, and what stays in the heap is the model's "skeleton",
// where every initializer of INSIDE_MIN bytes or more is external data of the model file itself
// (location = the file's name, offset = where its bytes start in the file, length). Generation
// keeps those frozen weights by reference, the training and eval models refer to the base file
// at those offsets (ONNX Runtime reads them there too: they are plain external data) and carry
// its fingerprint (its size and the hash of its skeleton, written by the generator), and
// Module.create checks the fingerprint before it streams the byte ranges into the heap once.
//
// What is read: a Node file and a Blob by positional reads, past the left-out ranges (never
// read); bytes in memory a window at a time; a URL's body streams through once, the left-out
// ranges dropped unless keep(ref) asks for them (generation's read-ahead: the trained
// parameters). A model whose left-out ranges add up to less than INSIDE_BY_REFERENCE (unless
// forced), one that does not scan as an ONNX model, or a source of another kind (a Response of
// bytes, idb://, an onnxblock model) goes into the heap as it is, once, for the core's parser
// (which says what is wrong with it).
import { init, WebtrainError } from './core.js';
import { IoKind, IoSide, Status } from './abi.js';
import { concatBytes } from './bytes.js';
import { IO_CHUNK, openSource, sniff, wholeOf } from './source.js';

/** Initializers with at least this many data bytes inside a model are referenced, not copied. */
export const INSIDE_MIN = 4096;
/** Weights inside a model are referenced from this many bytes of them on (or with keepExternalData: true). */
export const INSIDE_BY_REFERENCE = 32 * 2 ** 20;
/** A stream's first bytes kept to hand the model over as it is when it is not referenced. */
const RAW_KEPT = 2 * INSIDE_BY_REFERENCE;
/** The heap window a scanned source passes through. */
const WINDOW = 2 ** 20;
/** The smallest positional read (a tensor's header is far smaller). */
const PIECE = 64 * 1024;

/** A location for the model file: its name when it has one, else 'model.onnx'. */
const locationOf = (src) => src.name ?? 'model.onnx';

/**
 * The record of a model in the heap (io/onnx_scan.h), or, for bytes that do not read as one, the
 * bytes alone (`error` says why; the parser says more). free() when done.
 */
export class ModelRecord {
  constructor(core, h, p = 0, n = 0, error = null) {
    this.core = core;
    this.h = h;
    this.p = h ? core.m._wtw_record_bytes(h) >>> 0 : p;
    this.n = h ? core.m._wtw_record_size(h) : n;
    this.error = error;
  }

  /** Every tensor the model keeps in a side file: [{ tensor, location, offset, length, dtype }]. */
  external() {
    const { core, h } = this;
    const m = core.m;
    if (!h) throw new WebtrainError(this.error);
    return Array.from({ length: m._wtw_record_external_count(h) }, (_, i) => ({
      tensor: core.string(m._wtw_record_external_tensor(h, i)),
      location: core.string(m._wtw_record_external_location(h, i)).replace(/^(\.\/)+/, ''),
      offset: m._wtw_record_external_offset(h, i),
      length: m._wtw_record_external_length(h, i),
      dtype: m._wtw_record_external_dtype(h, i),
    }));
  }

  /** The base files whose fingerprints the model carries: Map location -> { size, hash }. */
  prints() {
    const { core, h } = this;
    const m = core.m;
    if (!h) return new Map();
    return new Map(Array.from({ length: m._wtw_record_print_count(h) }, (_, i) => [core.string(m._wtw_record_print_location(h, i)), { size: m._wtw_record_print_size(h, i), hash: m._wtw_record_print_hash(h, i) }]));
  }

  /** The ranges left out of a scanned file: [{ tensor, offset, length, dtype }]. */
  inside() {
    const { core, h } = this;
    const m = core.m;
    return Array.from({ length: h ? m._wtw_record_inside_count(h) : 0 }, (_, i) => ({
      tensor: core.string(m._wtw_record_inside_tensor(h, i)),
      offset: m._wtw_record_inside_offset(h, i),
      length: m._wtw_record_inside_length(h, i),
      dtype: m._wtw_record_inside_dtype(h, i),
    }));
  }

  /**
   * The graph's inputs or outputs ('inputs' | 'outputs'): [{ name, dtype, sequence, dims }] (dims:
   * numbers, or dim names, null for an unnamed one; null: no shape; sequence: a sequence of such
   * tensors, as optimizer models take).
   */
  io(which) {
    const { core, h } = this;
    const m = core.m;
    if (!h) throw new WebtrainError(this.error);
    const side = which === 'outputs' ? IoSide.OUTPUTS : IoSide.INPUTS;
    return Array.from({ length: m._wtw_record_io_count(h, side) }, (_, i) => {
      const rank = m._wtw_record_io_rank(h, side, i);
      const dims = rank < 0 ? null : Array.from({ length: rank }, (_, a) => {
        const d = m._wtw_record_io_dim(h, side, i, a);
        return d >= 0 ? d : core.string(m._wtw_record_io_dim_param(h, side, i, a)) || null;
      });
      const sequence = m._wtw_record_io_kind(h, side, i) === IoKind.SEQUENCE;
      return { name: core.string(m._wtw_record_io_name(h, side, i)), dtype: m._wtw_record_io_dtype(h, side, i), sequence, dims };
    });
  }

  free() {
    if (this.h) this.core.m._wtw_record_free(this.h);
    else this.core.free(this.p);
    this.h = 0;
    this.p = 0;
  }
}

/** Bytes already in the heap (p, n: malloc'd, taken) as a record. */
function recordOf(core, p, n) {
  const h = core.m._wtw_record_read(p, n);
  return h ? new ModelRecord(core, h) : new ModelRecord(core, 0, p, n, core.lastError());
}

/** A model's bytes in memory into the heap as a record (the one copy). */
export function recordOfBytes(core, bytes) {
  return recordOf(core, core.copyIn(bytes), bytes.byteLength);
}

/** A source into the heap as it is: positional sources straight into their heap buffer. */
async function whole(core, src, raw = null, check = true) {
  const sniffed = (b) => (check ? sniff(b, src.what, src.hint) : b);
  if (raw) return recordOfBytes(core, sniffed(raw));
  if (!src.read || src.bytes) return recordOfBytes(core, sniffed(await wholeOf(src)));
  const p = core.malloc(src.size);
  try {
    for (let done = 0; done < src.size;) {
      const n = Math.min(IO_CHUNK, src.size - done);
      await src.read(done, core.heap.subarray(p + done, p + done + n)); // core.heap: re-read, the Memory may have grown
      if (!done && check) sniff(core.heap.subarray(p, p + Math.min(n, 512)), src.what, src.hint);
      done += n;
    }
  } catch (err) {
    core.free(p);
    throw err;
  }
  return recordOf(core, p, src.size);
}

/** The ranges found since `seen` in scan h. */
function found(core, h, seen) {
  const m = core.m;
  const out = [];
  for (let i = seen, n = m._wtw_scan_inside_count(h); i < n; i++) {
    out.push({ tensor: core.string(m._wtw_scan_inside_tensor(h, i)), offset: m._wtw_scan_inside_offset(h, i), length: m._wtw_scan_inside_length(h, i), dtype: m._wtw_scan_inside_dtype(h, i) });
  }
  return out;
}

/**
 * Streams a source through a scanner: { h (the scan, finished, or 0 when the bytes do not scan
 * as a model), kept: Map `${offset}:${length}` -> the bytes keep(ref) asked for (streams), raw:
 * a stream's bytes when it was read to its end within RAW_KEPT (else null) }.
 */
async function scanSource(core, src, location, keep, check = true) {
  const m = core.m;
  const h = core.handle(core.withStrings([location], (pl) => m._wtw_scan_new(pl, src.size ?? -1, INSIDE_MIN)));
  const win = core.malloc(WINDOW);
  const kept = new Map();
  let raw = src.read ? null : [];
  let rc = Status.OK;
  try {
    const push = (piece) => {
      // bytes the scanner drops are not copied into the heap
      const skip = m._wtw_scan_skip(h);
      if (skip >= piece.byteLength) return m._wtw_scan_pass(h, piece.byteLength);
      core.heap.set(piece, win);
      return m._wtw_scan_push(h, win, piece.byteLength);
    };
    if (src.read) {
      // reads grow while the scan copies (a skeleton's run of small tensors) and start small
      // again past a left-out range (the next one may begin soon: its bytes are not to be read)
      for (let at = 0, piece = PIECE; at < src.size && rc === Status.OK;) {
        const n = Math.min(piece, src.size - at);
        await src.read(at, core.heap.subarray(win, win + n));
        if (!at && check) sniff(core.heap.subarray(win, win + Math.min(n, 512)), src.what, src.hint);
        rc = m._wtw_scan_push(h, win, n);
        at += n;
        const skip = rc === Status.OK ? Math.min(m._wtw_scan_skip(h), src.size - at) : 0;
        if (skip) rc = m._wtw_scan_pass(h, skip);
        at += skip;
        piece = skip ? PIECE : Math.min(2 * piece, WINDOW);
      }
    } else {
      const reader = src.chunks().getReader();
      const want = [];
      let pos = 0;
      let seen = 0;
      let rawBytes = 0;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (raw && (rawBytes += value.byteLength) <= RAW_KEPT) raw.push(value);
          else raw = null;
          if (rc !== Status.OK) {
            if (!raw) break; // neither scanned nor kept: fetched again
            continue;
          }
          if (!pos && check) sniff(value.subarray(0, 512), src.what, src.hint);
          for (let off = 0; off < value.byteLength && rc === Status.OK; off += WINDOW) rc = push(value.subarray(off, off + WINDOW));
          // the ranges keep() asks for are copied as the stream passes them
          const refs = found(core, h, seen);
          seen += refs.length;
          for (const ref of refs) if (keep?.(ref)) want.push({ ref, u8: new Uint8Array(ref.length), got: 0 });
          for (const w of want) {
            const from = Math.max(w.ref.offset, pos);
            const to = Math.min(w.ref.offset + w.ref.length, pos + value.byteLength);
            if (to <= from) continue;
            w.u8.set(value.subarray(from - pos, to - pos), from - w.ref.offset);
            w.got += to - from;
          }
          pos += value.byteLength;
        }
      } finally {
        reader.cancel().catch(() => {});
      }
      for (const w of want) if (w.got === w.ref.length) kept.set(`${w.ref.offset}:${w.ref.length}`, w.u8);
    }
    if (rc === Status.OK) rc = m._wtw_scan_finish(h);
    if (rc === Status.ERR_IO) throw new WebtrainError(`${src.what}: ${core.lastError()}`);
    if (rc === Status.ERR_NO_MEMORY) throw new WebtrainError(core.lastError());
  } catch (err) {
    m._wtw_scan_free(h);
    throw err;
  } finally {
    core.free(win);
  }
  if (rc !== Status.OK) m._wtw_scan_free(h);
  return { h: rc === Status.OK ? h : 0, kept, raw: raw && raw.length ? raw : null };
}

/**
 * A model source -> { record (a ModelRecord: free it), inside }. inside is null (the record holds
 * the model as it is) when its initializers of INSIDE_MIN bytes or more add up to less than
 * INSIDE_BY_REFERENCE, unless `force` (keepExternalData: true given): small models keep
 * self-contained artifacts. Else { location, refs: [{ tensor, offset, length, dtype }], size,
 * hash, data, what, kept } with the record holding the skeleton: `data` reads the model file
 * again (its path, URL, Blob or bytes) and `kept` (a stream) the ranges keep(ref) asked for.
 * check: false hands an HTML page or JSON to the parser like any bytes (no hint).
 */
export async function readModel(core, source, { keep = null, location = null, force = false, check = true } = {}) {
  const src = await openSource(source);
  try {
    // a stream is scanned only from an http(s) URL (the weights are fetched from it again), bytes
    // only when given as such (an idb:// entry's or a built model's are not a file to refer to)
    const scannable = (src.read && !src.loaded) || (src.url && /^https?:/i.test(src.url));
    if (!scannable || !(force || src.size === undefined || src.size >= INSIDE_BY_REFERENCE)) return { record: await whole(core, src, null, check), inside: null };
    const loc = location ?? locationOf(src);
    const scan = await scanSource(core, src, loc, src.read ? null : keep, check);
    const s = scan.h ? core.m._wtw_scan_record(scan.h) : 0;
    if (scan.h) core.m._wtw_scan_free(scan.h);
    if (s) {
      // (a skeleton that does not read as a record: the model as it is, for the parser to say why)
      const record = new ModelRecord(core, s);
      const refs = record.inside();
      const referenced = refs.reduce((a, r) => a + r.length, 0);
      if (refs.length && (force || referenced >= INSIDE_BY_REFERENCE)) {
        const m = core.m;
        const data = src.bytes ?? src.blob ?? src.path ?? src.url;
        const inside = { location: loc, refs, size: m._wtw_record_self_size(record.h), hash: m._wtw_record_self_hash(record.h), data, what: src.what, kept: src.read ? null : scan.kept };
        return { record, inside };
      }
      record.free();
    }
    // as it is: read again (a stream's first RAW_KEPT bytes were kept)
    if (scan.raw) return { record: await whole(core, src, concatBytes(scan.raw), check), inside: null };
    if (src.read) return { record: await whole(core, src, null, check), inside: null };
    return { record: await whole(core, await openSource(source), null, check), inside: null };
  } finally {
    await src.close();
  }
}

/**
 * scanModel(source, options) -> { bytes, inside }: readModel with the record's model copied out
 * (bytes: the model as it is when inside is null, else its skeleton), for tools and tests that
 * look at what the core is handed.
 */
export async function scanModel(source, options = {}) {
  const core = await init();
  const { record, inside } = await readModel(core, source, options);
  try {
    const given = source instanceof Uint8Array && !inside && record.n === source.byteLength;
    return { bytes: given ? source : core.copyOut(record.p, record.n), inside };
  } finally {
    record.free();
  }
}

/**
 * Checks that a base file (a source: js/source.js) is the one the artifacts were generated
 * from: its size, and (random-access sources) its skeleton's hash, computed by the core's
 * scanner reading only the parts between the weights. Throws naming the file.
 */
export async function checkFingerprint(core, side, location, want) {
  const changed = (what) => new WebtrainError(`${side.what}, the model file the artifacts refer to as '${location}' for its weights, is not the one they were generated from (${what}): it changed since; generate the artifacts again from it`);
  if (side.size !== undefined && side.size !== want.size) throw changed(`${side.size} bytes, generated from ${want.size}`);
  if (!side.read) return; // a stream: its size only (reading it twice would fetch it twice)
  const scan = await scanSource(core, side, location, null).catch((err) => {
    throw changed(`it no longer reads as an ONNX model: ${err.message}`);
  });
  if (!scan.h) throw changed(`it no longer reads as an ONNX model: ${core.lastError()}`);
  const hash = core.m._wtw_scan_hash(scan.h);
  core.m._wtw_scan_free(scan.h);
  const hex = (x) => x.toString(16).padStart(8, '0');
  if (hash !== want.hash) throw changed(`its tensors' names, shapes or places differ: fingerprint ${hex(hash)}, generated from ${hex(want.hash)}`);
}
