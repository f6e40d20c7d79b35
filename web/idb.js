// IndexedDB persistence: `idb://NAME` as a checkpoint, model or artifact location.
//
// Importing this module registers an `idb://` source (js/bytes.js) and sink (js/storage.js), so
//   await CheckpointState.saveCheckpoint(state, 'idb://my-model', { includeOptimizerState: true });
//   const state = await CheckpointState.loadCheckpoint('idb://my-model');
//   await module.exportModelForInferencing('idb://my-model.onnx', ['output']);
//   await artifacts.generateArtifacts(model, { ..., artifactDirectory: 'idb://digits/' });
// work in pages and workers. NAME is any non-empty string ('digits/checkpoint' is fine: the
// slash has no meaning to IndexedDB, it just groups names for list('digits/')).
//
// Storage: database 'webtrain' (configure() changes it), two object stores: 'blobs' (name ->
// bytes as an ArrayBuffer) and 'meta' (name -> { name, size, modified }). A save writes both in
// ONE readwrite transaction: IndexedDB commits it entirely or not at all, so a crash, a closed
// tab or a full disk leaves the previous version of that name intact. list() reads 'meta' only,
// so listing never loads the stored bytes.
//
// Errors are WebtrainErrors naming the entry; an exhausted quota says so
// (err.code === 'QuotaExceededError').
import { WebtrainError } from '../js/core.js';
import { registerSource } from '../js/bytes.js';
import { registerSink } from '../js/storage.js';
import { registerExternalStore } from '../js/checkpoint-data.js';
import { checkOptions } from '../js/options.js';

const PREFIX = 'idb://';
const VERSION = 1;
const BLOBS = 'blobs';
const META = 'meta';

let settings = { database: 'webtrain', indexedDB: null, chunkBytes: 64 * 2 ** 20 };
let dbPromise = null;

/**
 * Changes the database name and/or the IndexedDB factory (default: globalThis.indexedDB; Node
 * tests pass fake-indexeddb's), and the size of the chunks a checkpoint's external data is
 * stored in (default 64 MiB). Closes the current connection.
 */
export function configure(options = {}) {
  const { database, indexedDB, chunkBytes } = checkOptions(options, ['database', 'indexedDB', 'chunkBytes'], 'idb.configure') ?? {};
  if (database !== undefined) {
    if (typeof database !== 'string' || !database) throw new WebtrainError('idb.configure: database must be a non-empty string');
    settings.database = database;
  }
  if (chunkBytes !== undefined) {
    if (!Number.isInteger(chunkBytes) || chunkBytes < 1) throw new WebtrainError('idb.configure: chunkBytes must be a whole number >= 1');
    settings.chunkBytes = chunkBytes;
  }
  if (indexedDB !== undefined) settings.indexedDB = indexedDB;
  close();
}

/** Closes the connection (the next call reopens it). */
export function close() {
  const p = dbPromise;
  dbPromise = null;
  if (p) p.then((db) => db.close(), () => {});
}

/** Whether `location` is an idb:// location (a string or a URL). */
export function isIdbLocation(location) {
  if (typeof location === 'string') return location.startsWith(PREFIX);
  return typeof URL !== 'undefined' && location instanceof URL && location.protocol === 'idb:';
}

/** 'idb://x', URL('idb://x') or a bare 'x' -> 'x'. */
export function entryName(location) {
  const s = location instanceof URL ? location.href : location;
  if (typeof s !== 'string') throw new WebtrainError(`idb: expected a name or an idb:// location; got ${s === null ? 'null' : typeof s}`);
  const name = s.startsWith(PREFIX) ? s.slice(PREFIX.length) : s;
  if (!name) throw new WebtrainError(`idb: '${s}' names no entry (expected idb://NAME)`);
  return name;
}

function factory() {
  const f = settings.indexedDB ?? globalThis.indexedDB;
  if (!f) throw new WebtrainError('idb:// locations need IndexedDB, which this environment does not provide (in Node, configure({ indexedDB }) with e.g. fake-indexeddb)');
  return f;
}

function db() {
  if (!dbPromise) {
    const p = new Promise((resolve, reject) => {
      let req;
      try {
        req = factory().open(settings.database, VERSION);
      } catch (err) {
        reject(wrap(err, `cannot open IndexedDB database '${settings.database}'`));
        return;
      }
      req.onupgradeneeded = () => {
        const d = req.result;
        if (!d.objectStoreNames.contains(BLOBS)) d.createObjectStore(BLOBS);
        if (!d.objectStoreNames.contains(META)) d.createObjectStore(META);
      };
      req.onsuccess = () => {
        const d = req.result;
        // Another tab upgrading or deleting the database: let it, reopen on next use.
        d.onversionchange = () => {
          d.close();
          if (dbPromise === p) dbPromise = null;
        };
        d.onclose = () => {
          if (dbPromise === p) dbPromise = null;
        };
        resolve(d);
      };
      req.onerror = () => reject(wrap(req.error, `cannot open IndexedDB database '${settings.database}'`));
      req.onblocked = () => reject(new WebtrainError(`IndexedDB database '${settings.database}' is blocked by another tab holding an older version open`));
    });
    dbPromise = p;
    p.catch(() => {
      if (dbPromise === p) dbPromise = null;
    });
  }
  return dbPromise;
}

function isQuota(err) {
  return !!err && (err.name === 'QuotaExceededError' || /quota/i.test(err.message ?? ''));
}

function wrap(err, context) {
  if (err instanceof WebtrainError) return err;
  const e = new WebtrainError(`${context}: ${err?.name && err.name !== 'Error' ? `${err.name}: ` : ''}${err?.message ?? err}`);
  if (err?.name) e.code = err.name;
  e.cause = err;
  return e;
}

/** Runs fn(stores...) in one transaction; resolves with fn's result once it has committed. */
async function transaction(mode, stores, context, fn) {
  const d = await db();
  return new Promise((resolve, reject) => {
    let tx;
    let result;
    try {
      tx = d.transaction(stores, mode, mode === 'readwrite' ? { durability: 'strict' } : undefined);
    } catch (err) {
      reject(wrap(err, context));
      return;
    }
    tx.oncomplete = () => resolve(result);
    tx.onabort = () => reject(error(tx.error, context));
    tx.onerror = (ev) => ev.preventDefault?.(); // reported once, by onabort
    try {
      result = fn(...stores.map((s) => tx.objectStore(s)), (v) => (result = v));
    } catch (err) {
      try {
        tx.abort();
      } catch {
        /* already finished */
      }
      reject(error(err, context));
    }
  });
}

function error(err, context) {
  if (isQuota(err)) {
    const e = new WebtrainError(`${context}: the browser's storage quota for this site is exhausted (QuotaExceededError); nothing was written and any previous version is intact — delete entries (webtrain.idb.delete) or ask for more (navigator.storage.persist())`);
    e.code = 'QuotaExceededError';
    e.cause = err;
    return e;
  }
  return wrap(err ?? new Error('transaction aborted'), context);
}

function toArrayBuffer(bytes) {
  if (bytes instanceof ArrayBuffer) return bytes;
  if (!ArrayBuffer.isView(bytes)) throw new WebtrainError(`idb: expected bytes (Uint8Array or ArrayBuffer); got ${bytes?.constructor?.name ?? typeof bytes}`);
  // Stored as an exact ArrayBuffer (a view of a larger buffer would store the whole buffer).
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
    ? bytes.buffer
    : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
}

/** Stores `bytes` under NAME, replacing any previous version atomically. */
export async function save(location, bytes) {
  const name = entryName(location);
  const buf = toArrayBuffer(bytes);
  const meta = { name, size: buf.byteLength, modified: Date.now() };
  await transaction('readwrite', [BLOBS, META], `cannot save '${PREFIX}${name}' (${buf.byteLength} bytes) to IndexedDB`, (blobs, metas) => {
    dropChunks(blobs, metas, name, 0); // of a checkpoint with external data saved there before
    blobs.put(buf, name);
    metas.put(meta, name);
  });
  return meta;
}

// A checkpoint with external data (over 2 GB: js/checkpoint-data.js) is stored as its
// checkpoint file under NAME and its side file in chunks (64 MiB; configure) under
// NAME + '\0data\0' + index, all written in one transaction (no multi-GB value; a failed save
// leaves the previous version whole). Its META record counts the chunks.
const chunkKey = (name, k) => `${name}\u0000data\u0000${String(k).padStart(6, '0')}`;

/** Stores a checkpoint with external data: `head` under NAME, pieces() (its side file in order) in chunks. */
async function saveExternal(location, head, pieces) {
  const name = entryName(location);
  const buf = toArrayBuffer(head);
  let dataSize = 0;
  await transaction('readwrite', [BLOBS, META], `cannot save '${PREFIX}${name}' (a checkpoint with external data) to IndexedDB`, (blobs, metas) => {
    let chunks = 0;
    for (const piece of pieces(settings.chunkBytes)) {
      blobs.put(toArrayBuffer(piece), chunkKey(name, chunks++));
      dataSize += piece.byteLength;
    }
    dropChunks(blobs, metas, name, chunks); // a longer version's tail
    blobs.put(buf, name);
    metas.put({ name, size: buf.byteLength, modified: Date.now(), chunks, dataSize }, name);
  });
}

/** The side file of a checkpoint stored with external data, as a stream of its chunks (js/checkpoint-data.js openSide). */
async function openExternal(location) {
  const name = entryName(location);
  const meta = await transaction('readonly', [META], `cannot read '${PREFIX}${name}' from IndexedDB`, (metas, set) => {
    const req = metas.get(name);
    req.onsuccess = () => set(req.result);
  });
  if (!meta?.chunks) throw new WebtrainError(`IndexedDB entry '${PREFIX}${name}' is a checkpoint with external data, but its data is not stored (saved by something other than saveCheckpoint?)`);
  let k = 0;
  const chunks = () => new ReadableStream({
    async pull(controller) {
      if (k === meta.chunks) return controller.close();
      const key = chunkKey(name, k++);
      const buf = await transaction('readonly', [BLOBS], `cannot read '${PREFIX}${name}' from IndexedDB`, (blobs, set) => {
        const req = blobs.get(key);
        req.onsuccess = () => set(req.result);
      });
      if (!(buf instanceof ArrayBuffer)) return controller.error(new WebtrainError(`IndexedDB entry '${PREFIX}${name}': chunk ${k} of ${meta.chunks} of its external data is missing`));
      controller.enqueue(new Uint8Array(buf));
    },
  });
  return { what: `IndexedDB entry '${PREFIX}${name}' (external data)`, size: meta.dataSize, chunks };
}

/** In an open transaction: deletes the external-data chunks of NAME's stored version from index `from` on (requests run in order: this sees the version before later puts). */
function dropChunks(blobs, metas, name, from) {
  const req = metas.get(name);
  req.onsuccess = () => {
    for (let k = from; k < (req.result?.chunks ?? 0); k++) blobs.delete(chunkKey(name, k));
  };
}

/** Deletes NAME's records in an open transaction (its chunks too). */
function deleteEntry(blobs, metas, name) {
  dropChunks(blobs, metas, name, 0);
  blobs.delete(name);
  metas.delete(name);
}

/** The bytes stored under NAME (a new Uint8Array); a WebtrainError when there are none. */
export async function load(location) {
  const name = entryName(location);
  const buf = await transaction('readonly', [BLOBS], `cannot read '${PREFIX}${name}' from IndexedDB`, (blobs, set) => {
    const req = blobs.get(name);
    req.onsuccess = () => set(req.result);
  });
  if (buf === undefined) throw new WebtrainError(`no IndexedDB entry '${PREFIX}${name}' in database '${settings.database}'${await hint(name)}`);
  if (buf instanceof ArrayBuffer) return new Uint8Array(buf);
  if (ArrayBuffer.isView(buf)) return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  throw new WebtrainError(`IndexedDB entry '${PREFIX}${name}' does not hold bytes`);
}

async function hint(name) {
  try {
    const names = (await list()).map((e) => e.name);
    if (!names.length) return ' (it is empty)';
    return ` (it holds: ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', ...' : ''})`;
  } catch {
    return '';
  }
}

/** Whether NAME is stored. */
export async function has(location) {
  const name = entryName(location);
  const n = await transaction('readonly', [META], `cannot read IndexedDB`, (metas, set) => {
    const req = metas.count(name);
    req.onsuccess = () => set(req.result);
  });
  return n > 0;
}

/**
 * Stored entries, sorted by name: [{ name, url: 'idb://name', size, modified (ms since epoch) }].
 * With a prefix ('digits/' or 'idb://digits/'), only names starting with it.
 */
export async function list(prefix = '') {
  const p = prefix ? (String(prefix).startsWith(PREFIX) ? String(prefix).slice(PREFIX.length) : String(prefix)) : '';
  const all = await transaction('readonly', [META], 'cannot list IndexedDB entries', (metas, set) => {
    const req = metas.getAll();
    req.onsuccess = () => set(req.result);
  });
  return all
    .filter((m) => m.name.startsWith(p))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((m) => ({ name: m.name, url: `${PREFIX}${m.name}`, size: m.size + (m.dataSize ?? 0), modified: m.modified }));
}

/** Deletes NAME; resolves true if it existed. */
async function remove(location) {
  const name = entryName(location);
  return transaction('readwrite', [BLOBS, META], `cannot delete '${PREFIX}${name}' from IndexedDB`, (blobs, metas, set) => {
    const req = metas.count(name);
    req.onsuccess = () => set(req.result > 0);
    deleteEntry(blobs, metas, name);
  });
}
export { remove as delete };

/** Deletes every entry (or those whose names start with `prefix`); resolves with the count. */
export async function clear(prefix = '') {
  const names = (await list(prefix)).map((e) => e.name);
  if (!names.length) return 0;
  await transaction('readwrite', [BLOBS, META], 'cannot clear IndexedDB entries', (blobs, metas) => {
    for (const n of names) deleteEntry(blobs, metas, n);
  });
  return names.length;
}

registerSource(isIdbLocation, load);
registerSink(isIdbLocation, async (location, bytes) => {
  await save(location, bytes);
});
registerExternalStore(isIdbLocation, { open: openExternal, save: saveExternal });
