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

// n + (-n & 15), not (n + 15) & ~15: a heap offset past 2 GB stays positive
const align16 = (n) => n + (-n & 15);
const DIMS_BYTES = 8 * 16; // a rank-16 dims record of doubles, the ABI's largest

/**
 * Input staging memory in the wasm heap: one buffer per owner, grown when needed, so that a run
 * allocates nothing once warm (Module); `keep` false frees it after every run (InferenceSession).
 */
export class Staging {
  #core;
  #keep;
  #ptr = 0;
  #bytes = 0;
  constructor(core, keep) {
    this.#core = core;
    this.#keep = keep;
  }

  /** The buffer, at least `bytes` long, 16-byte aligned. */
  take(bytes) {
    if (bytes > this.#bytes) {
      const size = Math.max(bytes, Math.ceil(this.#bytes * 1.5), this.#keep ? 4096 : 0);
      const p = this.#core.malloc(size + 16);
      this.#core.free(this.#ptr);
      this.#ptr = p;
      this.#bytes = size;
    }
    return align16(this.#ptr);
  }

  /** After a run: frees the buffer unless it is kept. */
  done() {
    if (!this.#keep) this.release();
  }

  release() {
    this.#core.free(this.#ptr);
    this.#ptr = 0;
    this.#bytes = 0;
  }
}

/**
 * "Feed inputs": the tensors of one run from what the caller passed, checked against the model's
 * input names, converted to the declared dtypes and copied into `staging`; set(i, dtypeCode, rank,
 * dimsPtr, dataPtr) hands input i to the core (a status). The pointers stay valid until
 * staging.done(). Options:
 *   names: the model's input names; dtype(i): input i's declared dtype code;
 *   args: one { name: value } object or Map, or (positional) the values in input order;
 *   positional: whether values may come in order; model: 'the model' / 'the training model'
 *   (in messages); inputContext(name): the context of set's error, or null.
 */
export function feedInputs(core, staging, { names, args, positional, model, dtype, set, inputContext }) {
  const values = resolveArgs(names, args, positional, model);
  const tensors = values.map((v, i) => {
    const t = toTensor(v, names[i]);
    try {
      return coerce(t, dtype(i));
    } catch (err) {
      throw new WebtrainError(`input '${names[i]}': ${err.message}`);
    }
  });
  let bytes = 0;
  for (const t of tensors) bytes += DIMS_BYTES + align16(t.data.byteLength);
  let off = staging.take(bytes);
  tensors.forEach((t, i) => {
    const f64 = new Float64Array(core.heap.buffer, off, t.dims.length);
    for (let a = 0; a < t.dims.length; a++) f64[a] = t.dims[a];
    const dims = off;
    off += DIMS_BYTES;
    core.heap.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), off);
    const data = off;
    off += align16(t.data.byteLength);
    core.check(set(i, Tensor.typeCode(t.type), t.dims.length, dims, data), inputContext?.(names[i]));
  });
}

function resolveArgs(names, args, positional, model) {
  const list = { toString: () => `(inputs: ${names.join(', ')})` }; // spelled out only in an error
  const one = args.length === 1 ? args[0] : undefined;
  const byName = one instanceof Map || (!!one && typeof one === 'object' && !ArrayBuffer.isView(one) && !Array.isArray(one) && !isTensorLike(one));
  if (!positional && !byName) throw new WebtrainError(`run: expected { inputName: Tensor } ${list}`);
  if (byName) {
    const named = one instanceof Map ? Object.fromEntries(one) : one;
    for (const k of Object.keys(named)) if (!names.includes(k)) throw new WebtrainError(`'${k}' is not an input of ${model} ${list}`);
    return names.map((n) => {
      if (named[n] === undefined) throw new WebtrainError(positional ? `input '${n}' of ${model} is missing ${list}` : `input '${n}' is missing (expected a Tensor)`);
      return named[n];
    });
  }
  if (args.length !== names.length) throw new WebtrainError(`${model} takes ${names.length} inputs (${names.join(', ')}); ${args.length} were given`);
  return args;
}

/**
 * "Read outputs": output i as a Tensor copied out of the heap, from the core's accessors
 * rank(i), dim(i, axis), dtype(i), data(i); `count` outputs.
 */
export function readOutputs(core, count, at) {
  return Array.from({ length: count }, (_, i) => readTensor(core, at, i));
}

/** One tensor the core holds, copied out: at.rank(i), at.dim(i, axis), at.dtype(i), at.data(i). */
export function readTensor(core, at, i) {
  const dims = Array.from({ length: at.rank(i) }, (_, a) => at.dim(i, a));
  return Tensor.fromHeap(core.heap, at.dtype(i), at.data(i), dims);
}
