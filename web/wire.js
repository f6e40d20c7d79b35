// The values of the worker protocol (web/worker-host.js <-> web/worker.js), one encoding for
// both directions: objects that stay on one side cross as { __ref: id, kind }, Tensors as
// { __tensor: { type, data, dims } }, arrays, Maps and plain objects element by element, typed
// arrays and ArrayBuffers as they are (structured clone), their buffers transferred (moved)
// where the sender says so, URLs as their href. Functions cannot cross.
import { Tensor } from '../js/tensor.js';
import { WebtrainError } from '../js/core.js';

/** Arrays, Maps and plain objects with f applied to each element; anything else as it is. */
function each(v, f) {
  if (Array.isArray(v)) return v.map(f);
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, f(x)]));
  if (Object.getPrototypeOf(v) === Object.prototype) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, f(x)]));
  return v;
}

/**
 * v for postMessage. ref(x): x's { __ref, kind } when x stays on this side, else null;
 * isTensor(x): whether x crosses as a tensor; move(x): whether the buffer of x (a tensor, typed
 * array or ArrayBuffer) moves, added then to the Set `transfer`.
 */
/** An onProgress option crossing to the worker: the worker posts the call's progress to the host (web/worker-host.js). */
export const PROGRESS = '__webtrain_progress__';

export function encode(v, how) {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'function') throw new WebtrainError('functions cannot be sent to the webtrain worker');
    return v;
  }
  const r = how.ref(v);
  if (r) return r;
  if (how.isTensor(v)) {
    if (how.move(v)) how.transfer.add(v.data.buffer);
    return { __tensor: { type: v.type, data: v.data, dims: [...v.dims] } };
  }
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) {
    if (how.move(v)) how.transfer.add(v.buffer ?? v);
    return v;
  }
  if (v instanceof URL) return v.href;
  if (typeof Response !== 'undefined' && v instanceof Response) {
    throw new WebtrainError(`a Response cannot be sent to the webtrain worker: pass its bytes (await res.arrayBuffer()) or its URL${v.url ? ` ('${v.url}')` : ''}`);
  }
  return each(v, (x) => encode(x, how));
}

/** A value that crossed: { __ref } -> deref(it), { __tensor } -> Tensor, containers element by element. */
export function decode(v, deref) {
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return v;
  if (Object.getPrototypeOf(v) === Object.prototype) {
    if ('__ref' in v) return deref(v);
    if ('__tensor' in v) return new Tensor(v.__tensor.type, v.__tensor.data, v.__tensor.dims);
  }
  return each(v, (x) => decode(x, deref));
}
