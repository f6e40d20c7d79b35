// Persisting bytes. Node: atomic file writes (temporary file in the same directory, fsync,
// rename, fsync of the directory) so a crash never leaves a half-written checkpoint where a
// good one was. Browsers: see web/ (IndexedDB).
import { WebtrainError } from './core.js';
import { importNode, isNode } from './node-builtin.js';

const sinks = [];

/** Lets other layers (web/) handle destinations such as idb://name. */
export function registerSink(test, write) {
  sinks.push({ test, write });
}

/** A Node file path from a path string, a file: URL string or a URL object. */
async function toPath(destination) {
  const s = destination instanceof URL ? destination.href : String(destination);
  if (!s.startsWith('file:')) {
    if (/^[a-z][a-z0-9+.-]+:\/\//i.test(s)) throw new WebtrainError(`cannot write to '${s}': only file paths and file: URLs can be written in Node`);
    return s;
  }
  const { fileURLToPath } = await importNode('url');
  return fileURLToPath(s);
}

export async function writeBytes(destination, bytes) {
  for (const s of sinks) if (s.test(destination)) return s.write(destination, bytes);
  if (typeof destination === 'function') return destination(bytes);
  if (!isNode) throw new WebtrainError(`cannot write to '${destination}' in this environment`);
  await writeFileAtomic(await toPath(destination), (fh) => fh.writeFile(bytes));
}

/**
 * Node: writes the file at `path` through fill(fileHandle) into a temporary file in the same
 * directory, fsyncs it and renames it over `path` (then fsyncs the directory), so that a crash
 * never leaves a half-written file where a good one was.
 */
export async function writeFileAtomic(path, fill) {
  const fs = await importNode('fs/promises');
  const { dirname } = await importNode('path');
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  let fh;
  try {
    fh = await fs.open(tmp, 'wx');
    await fill(fh);
    await fh.sync();
    await fh.close();
    fh = null;
    await fs.rename(tmp, path);
  } catch (err) {
    if (fh) await fh.close().catch(() => {});
    await fs.rm(tmp, { force: true }).catch(() => {});
    if (err instanceof WebtrainError) throw err;
    const why = err.code === 'ENOENT' ? `directory '${dirname(path)}' does not exist` : err.message;
    throw new WebtrainError(`cannot write '${path}': ${why}`);
  }
  // Make the rename itself durable (best effort: not every platform can fsync a directory).
  try {
    const dh = await fs.open(dirname(path), 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  } catch {
    /* ignore */
  }
}

/** A Node file path for a destination that is one (a path string, file: URL); null otherwise. */
export async function nodePathOf(destination) {
  if (!isNode || typeof destination === 'function' || sinks.some((s) => s.test(destination))) return null;
  if (typeof destination !== 'string' && !(destination instanceof URL)) return null;
  return toPath(destination);
}
