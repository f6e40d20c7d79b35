// Persisting bytes. Node: atomic file writes (temporary file, fsync, rename) so a crash never
// leaves a half-written checkpoint where a good one was. Browsers: see web/ (IndexedDB).
import { WebtrainError } from './core.js';

const isNode = typeof process !== 'undefined' && process.versions?.node != null;
const sinks = [];

/** Lets other layers (web/) handle destinations such as idb://name. */
export function registerSink(test, write) {
  sinks.push({ test, write });
}

export async function writeBytes(destination, bytes) {
  for (const s of sinks) if (s.test(destination)) return s.write(destination, bytes);
  if (typeof destination === 'function') return destination(bytes);
  if (!isNode) throw new WebtrainError(`cannot write to '${destination}' in this environment`);
  const fs = await import('node:fs/promises');
  const path = destination instanceof URL ? destination : String(destination);
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  let fh;
  try {
    fh = await fs.open(tmp, 'w');
    await fh.writeFile(bytes);
    await fh.sync();
    await fh.close();
    fh = null;
    await fs.rename(tmp, path);
  } catch (err) {
    if (fh) await fh.close().catch(() => {});
    await fs.rm(tmp, { force: true }).catch(() => {});
    throw new WebtrainError(`cannot write '${path}': ${err.message}`);
  }
}
