// Turns what users pass as model inputs into Tensors: a Tensor, an onnxruntime-web-like
// { type, data, dims }, or a typed array with dims given separately.
import { Tensor } from './tensor.js';
import { WebtrainError } from './core.js';

export function toTensor(value, name, expectedType) {
  if (value instanceof Tensor) return value;
  if (value && typeof value === 'object' && 'data' in value && 'dims' in value) {
    const type = value.type ?? typeName(value.data);
    return new Tensor(type, value.data, value.dims);
  }
  if (ArrayBuffer.isView(value)) {
    return new Tensor(typeName(value), value, [value.length]);
  }
  throw new WebtrainError(`input '${name}': expected a Tensor or { type, data, dims }; got ${value === null ? 'null' : typeof value}`);
}

function typeName(data) {
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof BigInt64Array) return 'int64';
  if (data instanceof Uint8Array) return 'bool';
  throw new WebtrainError(`unsupported data array ${data?.constructor?.name}`);
}

/** Converts int tensors to the dtype a model input declares (int64 inputs accept Int32Array). */
export function coerce(t, code) {
  const want = Tensor.typeName(code);
  if (t.type === want) return t;
  if (want === 'int64' && t.type === 'int32') return new Tensor('int64', BigInt64Array.from(t.data, (x) => BigInt(x)), t.dims);
  if (want === 'int32' && t.type === 'int64') return new Tensor('int32', Int32Array.from(t.data, (x) => Number(x)), t.dims);
  return t;
}
