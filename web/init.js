// Loading the core in browsers: a WebAssembly SIMD check first (a clear error instead of a
// compile failure) and wasmUrl resolved against the page; js/core.js explains fetch failures.
import { init as coreInit, simdSupported, relaxedSimdSupported, checkSupport } from '../js/core.js';

export { simdSupported, relaxedSimdSupported, checkSupport };

/**
 * Loads the core once (every API call does it implicitly; call it first to choose the .wasm):
 * { wasmUrl?: string | URL, wasmBinary?: Uint8Array | ArrayBuffer, threads?: 'auto' | number,
 * threadedUrl?: string | URL, simd?: 'auto' | 'relaxed' | 'simd128' }: the threaded build where the page
 * is crossOriginIsolated, the relaxed-SIMD (FMA) build where the browser runs it. Rejects with a clear
 * WebtrainError where WebAssembly SIMD is missing or the .wasm cannot be fetched (js/core.js).
 */
export async function init(options = {}) {
  checkSupport();
  const opts = { ...options };
  if (opts.wasmUrl && !opts.wasmBinary) opts.wasmUrl = resolve(opts.wasmUrl);
  if (opts.threadedUrl) opts.threadedUrl = resolve(opts.threadedUrl);
  return coreInit(opts);
}

/** The URL relative locations are resolved against: the page's (document.baseURI), or a worker's. */
export const pageBase = () => (typeof document !== 'undefined' ? document.baseURI : globalThis.location?.href);

function resolve(url) {
  const base = pageBase();
  try {
    return base ? new URL(String(url), base).href : String(url);
  } catch {
    return String(url);
  }
}
