// Loading the core in browsers: a WebAssembly SIMD check first (a clear error instead of a
// compile failure), wasmUrl resolved against the page, and fetch failures explained.
import { init as coreInit, WebtrainError, simdSupported, checkSupport } from '../js/core.js';

export { simdSupported, checkSupport };

/**
 * Loads the core once (every API call does it implicitly; call it first to choose the .wasm):
 * { wasmUrl?: string | URL, wasmBinary?: Uint8Array | ArrayBuffer }. Rejects with a clear
 * WebtrainError where WebAssembly SIMD is missing or the .wasm cannot be fetched.
 */
export async function init(options = {}) {
  checkSupport();
  const opts = { ...options };
  if (opts.wasmUrl && !opts.wasmBinary) opts.wasmUrl = resolve(opts.wasmUrl);
  try {
    return await coreInit(opts);
  } catch (err) {
    if (err instanceof WebtrainError) throw err;
    const where = opts.wasmBinary ? 'the given wasmBinary' : opts.wasmUrl ?? new URL('../dist/webtrain-core.wasm', import.meta.url).href;
    let why = String(err?.message ?? err).replace(/\. Build with -s ASSERTIONS=1 for more info\.?$/, '');
    if (!opts.wasmBinary && typeof fetch === 'function') {
      try {
        const res = await fetch(where, { method: 'HEAD' });
        if (!res.ok) why = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
        else if (!/wasm/.test(res.headers.get('content-type') ?? '')) why += ` (served as '${res.headers.get('content-type')}', expected application/wasm)`;
      } catch (e) {
        why = `${why}; fetching it fails: ${e.message}`;
      }
    }
    const e = new WebtrainError(`cannot load webtrain's WebAssembly core from ${where}: ${why} (init({ wasmUrl }) tells webtrain where the .wasm is served)`);
    e.cause = err;
    throw e;
  }
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
