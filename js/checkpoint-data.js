// Checkpoints with external data: ONNX Runtime's layout for checkpoints over 2 GB (a
// flatbuffer cannot hold more). The checkpoint file keeps names, shapes and offsets; every
// tensor of 64 bytes or more lives in a side file named after it + '.data'
// (ExternalCheckpointDataPath in ONNX Runtime), at 4- or 8-byte aligned offsets.
// Loading streams the side file straight into the tensors' buffers in the wasm heap (a file
// handle's reads land in the heap; fetch bodies, Blob streams and bytes are copied chunk by
// chunk), so a checkpoint is never held twice. Saving writes the side file from the heap, then
// the checkpoint file, each atomically (see writeFileAtomic).
import { WebtrainError } from './core.js';
import { readBytes } from './bytes.js';
import { describe, IO_CHUNK, isBlob, isResponse, locationOf, nodeFilePath, openSource } from './source.js';
import { nodePathOf, writeFileAtomic } from './storage.js';

export const SIDE_SUFFIX = '.data';
/** saveCheckpoint's externalData: 'auto' writes a side file from this many tensor bytes on. */
export const AUTO_EXTERNAL_BYTES = 1.5 * 2 ** 30;
const SIDE_EXPECTED = 'a path, URL, Uint8Array, ArrayBuffer, Blob or File';

const stores = [];

/**
 * Lets other layers keep checkpoints with external data at their own locations (web/idb.js:
 * idb://NAME). store: { open(location) -> a side source (see openSide), save(location, head,
 * pieces) } where pieces(size) yields the side file's bytes in order, in copies of at most size
 * bytes (a segment's pieces never span the next segment: a chunk can be shorter).
 */
export function registerExternalStore(test, store) {
  stores.push({ test, store });
}
const storeOf = (location) => stores.find((s) => s.test(location))?.store;

/** Where a checkpoint source's side file is by default (path or URL + '.data', a store's), or null. */
export function defaultSide(source) {
  const store = storeOf(source);
  if (store) return { store, location: source };
  if (source instanceof URL) return new URL(source.href + SIDE_SUFFIX);
  if (typeof source === 'string' && !source.startsWith('idb:')) return source + SIDE_SUFFIX;
  return null;
}

/**
 * The side file as a source (js/source.js): { what, size, read(offset, dst) } (random access: a
 * Node file, bytes, a Blob) or { what, size, chunks() } (a stream: a fetch body, a store's). size
 * may be undefined for a stream without Content-Length. Missing files are a WebtrainError naming
 * them and what to do.
 */
export async function openSide(side, kind = "the checkpoint's external data") {
  if (side?.store && side.location) return side.store.open(side.location);
  return openSource(side, { kind, expected: SIDE_EXPECTED });
}

/** The state's pending tensor buffers, sorted by offset: [{ offset, bytes, ptr }]. */
function pending(core, h) {
  const m = core.m;
  const segs = [];
  for (let i = 0, n = m._wtw_state_pending_count(h); i < n; i++) {
    segs.push({ offset: m._wtw_state_pending_offset(h, i), bytes: m._wtw_state_pending_bytes(h, i), ptr: m._wtw_state_pending_data(h, i) >>> 0 });
  }
  segs.sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < segs.length; i++) {
    if (segs[i].offset < segs[i - 1].offset + segs[i - 1].bytes) throw new WebtrainError(`checkpoint: two tensors overlap in its external data file (bytes ${segs[i].offset}..${segs[i - 1].offset + segs[i - 1].bytes}): the checkpoint is corrupt`);
  }
  return segs;
}

/** Fills the pending buffers of state h (loaded with wtw_state_load_ext) from the side file. */
export async function fillPending(core, h, side, onProgress) {
  await fillSegments(core, pending(core, h), side, 'the checkpoint\'s tensors', onProgress);
  core.m._wtw_state_pending_done(h);
}

/**
 * Copies a side file (an openSide source) into heap buffers: segs [{ offset, bytes, ptr }]
 * sorted by offset, not overlapping; `need` says whose bytes they are (for a file cut short).
 * Random-access sources are read segment by segment in pieces of at most IO_CHUNK bytes straight
 * into the heap; a stream's chunks are copied into the segments they overlap as they arrive.
 * onProgress({ loaded, total }) after each piece (total: the segments' bytes).
 */
export async function fillSegments(core, segs, side, need, onProgress) {
  const total = segs.reduce((a, s) => a + s.bytes, 0);
  let loaded = 0;
  const progress = (n) => {
    loaded += n;
    onProgress?.({ loaded, total });
  };
  if (side.read) {
    for (const s of segs) {
      for (let done = 0; done < s.bytes;) {
        const n = Math.min(IO_CHUNK, s.bytes - done);
        await side.read(s.offset + done, core.heap.subarray(s.ptr + done, s.ptr + done + n)); // core.heap: re-read, the Memory may have grown
        done += n;
        progress(n);
      }
    }
  } else {
    let pos = 0;
    let k = 0;
    const reader = side.chunks().getReader();
    try {
      while (k < segs.length) {
        const { done, value } = await reader.read();
        if (done) break;
        const end = pos + value.byteLength;
        for (; k < segs.length && segs[k].offset < end; k++) {
          const s = segs[k];
          const from = Math.max(s.offset, pos);
          const to = Math.min(s.offset + s.bytes, end);
          if (to > from) {
            core.heap.set(value.subarray(from - pos, to - pos), s.ptr + (from - s.offset));
            progress(to - from);
          }
          if (s.offset + s.bytes > end) break; // continues in the next chunk
        }
        pos = end;
      }
    } finally {
      reader.cancel().catch(() => {});
    }
    if (k < segs.length) throw new WebtrainError(`${side.what} ended at byte ${pos}, but ${need} need ${segs.at(-1).offset + segs.at(-1).bytes}: the external data file is truncated or belongs to another ${need.includes('checkpoint') ? 'checkpoint' : 'model'}`);
  }
}

/**
 * A checkpoint (or model) source's bytes in the wasm heap: { p, n } (p malloc'd, the caller's).
 * A Node file or a Blob streams in pieces straight into the heap (no copy in JS), with
 * onProgress({ loaded, total }); other sources are read (readBytes) and copied in.
 */
export async function intoHeap(core, source, onProgress) {
  const s = locationOf(source);
  const local = (s !== null && (await nodeFilePath(s)) !== null) || (isBlob(source) && !isResponse(source));
  // readBytes says why one cannot be opened (with its own wording)
  const side = local ? await openSource(source, { kind: 'the checkpoint' }).catch(() => null) : null;
  const viaBytes = async () => {
    const bytes = await readBytes(source);
    onProgress?.({ loaded: bytes.byteLength, total: bytes.byteLength });
    return { p: core.copyIn(bytes), n: bytes.byteLength };
  };
  if (!side) return viaBytes();
  let p = 0;
  try {
    p = core.malloc(side.size);
    await fillSegments(core, [{ offset: 0, bytes: side.size, ptr: p }], side, 'the checkpoint', onProgress);
  } catch (err) {
    core.free(p);
    throw err;
  } finally {
    await side.close?.();
  }
  // no checkpoint ('ODTC' at byte 4): readBytes says what it is (an HTML page, JSON), or the parser does
  if (side.size < 8 || String.fromCharCode(...core.heap.subarray(p + 4, p + 8)) !== 'ODTC') {
    core.free(p);
    return viaBytes();
  }
  return { p, n: side.size };
}

/**
 * Loads a checkpoint whose flatbuffer (in the heap: { p, n }, taken) says it has external data;
 * returns the state handle.
 */
export async function loadExternal(core, { p, n }, sideSource, source, onProgress) {
  if (sideSource === undefined || sideSource === null) {
    core.free(p);
    throw new WebtrainError(`checkpoint${typeof source === 'string' ? ` '${source}'` : ''}: its tensors are in an external data file (the checkpoint's name + '${SIDE_SUFFIX}'): pass it as loadCheckpoint(checkpoint, { externalData })`);
  }
  let side;
  try {
    side = await openSide(sideSource);
  } catch (err) {
    core.free(p);
    throw err;
  }
  try {
    let size = side.size;
    if (size === undefined) {
      core.free(p);
      throw new WebtrainError(`${side.what}: the server gives no Content-Length, which loading the checkpoint's external data needs (serve it without compression, or pass the bytes or a Blob as externalData)`);
    }
    const h = core.handle(core.m._wtw_state_load_ext(p, n, size), 'cannot load checkpoint');
    try {
      await fillPending(core, h, side, onProgress);
    } catch (err) {
      core.m._wtw_state_free(h);
      throw err;
    }
    return h;
  } finally {
    await side.close?.();
  }
}

/**
 * Saves state h with external data: at a Node path, the side file (path + '.data') first, then
 * the checkpoint file; at a registered store's location (idb://NAME), through the store.
 * Returns the checkpoint file's bytes.
 */
export async function saveExternal(core, h, destination, includeOptimizerState) {
  const store = storeOf(destination);
  if (store) return withSegments(core, h, includeOptimizerState, async (head, segs) => {
    await store.save(destination, head, (size) => pieces(core, segs, size));
    return head;
  });
  const path = await nodePathOf(destination);
  if (!path) throw new WebtrainError(`saveCheckpoint with external data writes a file and its '${SIDE_SUFFIX}' side file: give a file path (in Node); got ${typeof destination === 'string' ? `'${destination}'` : describe(destination)}`);
  return withSegments(core, h, includeOptimizerState, async (head, segs) => {
    await writeFileAtomic(path + SIDE_SUFFIX, async (fh) => {
      let pos = 0;
      for (const { offset, bytes, ptr } of segs) {
        await writeZeros(fh, offset - pos);
        if (!ptr) await writeZeros(fh, bytes);
        for (let done = 0; ptr && done < bytes;) {
          const { bytesWritten } = await fh.write(core.heap, ptr + done, Math.min(IO_CHUNK, bytes - done));
          done += bytesWritten;
        }
        pos = offset + bytes;
      }
    });
    await writeFileAtomic(path, (fh) => fh.writeFile(head));
    return head;
  });
}

const ZEROS = new Uint8Array(16 * 2 ** 20);

async function writeZeros(fh, n) {
  for (; n > 0; n -= Math.min(n, ZEROS.byteLength)) await fh.write(ZEROS, 0, Math.min(n, ZEROS.byteLength));
}

/** fn(head, segments) on the state's checkpoint with external data (segments: { offset, bytes, ptr }, ptr 0 for zeros, in file order). */
async function withSegments(core, h, includeOptimizerState, fn) {
  const m = core.m;
  const x = core.handle(m._wtw_state_save_ext(h, includeOptimizerState ? 1 : 0), 'cannot save checkpoint');
  try {
    const head = core.copyOut(m._wtw_ext_save_head(x), m._wtw_ext_save_head_size(x));
    const segs = Array.from({ length: m._wtw_ext_save_count(x) }, (_, i) => ({
      offset: m._wtw_ext_save_offset(x, i),
      bytes: m._wtw_ext_save_bytes(x, i),
      ptr: m._wtw_ext_save_data(x, i) >>> 0,
    }));
    return await fn(head, segs);
  } finally {
    m._wtw_ext_save_free(x);
  }
}

/** The side file's bytes in order, as copies of at most `size` bytes (zeros between segments). */
function* pieces(core, segs, size) {
  let pos = 0;
  for (const { offset, bytes, ptr } of segs) {
    for (; pos < offset; pos += Math.min(size, offset - pos)) yield new Uint8Array(Math.min(size, offset - pos));
    for (let done = 0; done < bytes; done += size) {
      const n = Math.min(size, bytes - done);
      yield ptr ? core.heap.slice(ptr + done, ptr + done + n) : new Uint8Array(n);
    }
    pos = offset + bytes;
  }
}
