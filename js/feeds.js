// Turns what users pass as model inputs into Tensors: a Tensor, an onnxruntime-web-like
// { type, data, dims }, or a typed array with dims given separately.
import { Tensor } from './tensor.js';
import { WebtrainError } from './core.js';

/** Whether `value` looks like a tensor (a Tensor, or onnxruntime-web's { type, data, dims }). */
export function isTensorLike(value) {
  if (value instanceof Tensor) return true;
  return !!value && typeof value === 'object' && 'dims' in value && (ArrayBuffer.isView(value.data) || Array.isArray(value.data));
}

export function toTensor(value, name) {
  if (value instanceof Tensor) return value;
  try {
    if (isTensorLike(value)) {
      const type = value.type ?? typeName(value.data);
      return new Tensor(type, value.data, value.dims);
    }
    if (ArrayBuffer.isView(value)) return new Tensor(typeName(value), value, [value.length]);
  } catch (err) {
    throw new WebtrainError(`input '${name}': ${err.message}`);
  }
  throw new WebtrainError(`input '${name}': expected a Tensor, { type, data, dims } or a typed array; got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
}

function typeName(data) {
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof BigInt64Array) return 'int64';
  if (data instanceof Uint8Array) return 'bool';
  throw new WebtrainError(`unsupported data array ${data?.constructor?.name ?? typeof data} (expected Float32Array, Int32Array, BigInt64Array or Uint8Array)`);
}

/**
 * Converts integer tensors to the dtype a model input declares (ONNX dtype code): int64 inputs
 * accept int32 data and int32 inputs accept int64 data (values must fit). Anything else is
 * returned as is, for the core to check and report.
 */
export function coerce(t, code) {
  let want;
  try {
    want = Tensor.typeName(code);
  } catch {
    return t;
  }
  if (t.type === want) return t;
  if (want === 'int64' && t.type === 'int32') return new Tensor('int64', BigInt64Array.from(t.data, (x) => BigInt(x)), t.dims);
  if (want === 'int32' && t.type === 'int64') {
    const out = new Int32Array(t.size);
    for (let i = 0; i < t.size; i++) {
      const x = t.data[i];
      if (x < -2147483648n || x > 2147483647n) throw new RangeError(`value ${x} at index ${i} does not fit the int32 input`);
      out[i] = Number(x);
    }
    return new Tensor('int32', out, t.dims);
  }
  return t;
}
