// Options objects are checked against the keys each function documents (its d.ts): a
// misspelled key (`requiresgrad`) would otherwise be ignored and the default taken silently,
// e.g. every parameter trained. Each function keeps its list of keys next to its code.

/** Levenshtein distance between a and b (option names are short: the full table is cheap). */
function distance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

/** The known key nearest to `key` (case differences count as nothing), or null when none is near. */
export function closest(key, known) {
  let best = null;
  let bestD = Infinity;
  for (const k of known) {
    const d = k.toLowerCase() === key.toLowerCase() ? 0 : distance(key.toLowerCase(), k.toLowerCase());
    if (d < bestD) [best, bestD] = [k, d];
  }
  return bestD <= Math.max(2, Math.floor(key.length / 3)) ? best : null;
}

/**
 * Throws a TypeError for an own key of `options` that is not in `known` (an array of names):
 * "unknown option 'requiresgrad' for generateArtifacts; did you mean 'requiresGrad'?", or the
 * known keys when none is near. `options` undefined or null passes (the defaults); anything that
 * is not an object is an error too. Returns `options`.
 */
export function checkOptions(options, known, context) {
  if (options === undefined || options === null) return options;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${context}: options must be an object ({ ${known.join(', ')} }); got ${Array.isArray(options) ? 'an array' : typeof options}`);
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = closest(key, known);
    throw new TypeError(`unknown option '${key}' for ${context}; ${near ? `did you mean '${near}'?` : `the options are ${known.map((k) => `'${k}'`).join(', ')}`}`);
  }
  return options;
}

/** init()'s options (js/core.d.ts InitOptions), which every call that loads the core also takes. */
export const INIT_OPTIONS = ['wasmBinary', 'wasmUrl', 'threads', 'threadedUrl', 'simd', 'backend', 'gpu'];

/** The options of a call that reads a model (js/session.d.ts ModelOptions). */
export const MODEL_OPTIONS = [...INIT_OPTIONS, 'externalData'];
