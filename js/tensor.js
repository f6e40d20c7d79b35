// Tensor: a typed array with a shape and an ONNX element type, as onnxruntime-web's Tensor.
import { DType } from './abi.js';

const TYPES = {
  float32: { code: DType.FLOAT, array: Float32Array },
  int32: { code: DType.INT32, array: Int32Array },
  int64: { code: DType.INT64, array: BigInt64Array },
  bool: { code: DType.BOOL, array: Uint8Array },
  // IEEE float16 bit patterns (as onnxruntime-web holds them): frozen weights stored half size
  float16: { code: DType.FLOAT16, array: Uint16Array },
};
const BY_CODE = new Map(Object.entries(TYPES).map(([name, t]) => [t.code, name]));

export class Tensor {
  /**
   * new Tensor(type, data, dims) or new Tensor(data, dims) (type from the array: Float32Array ->
   * float32, Int32Array -> int32, BigInt64Array -> int64).
   */
  constructor(type, data, dims) {
    if (typeof type !== 'string') {
      dims = data;
      data = type;
      type = data instanceof BigInt64Array ? 'int64' : data instanceof Int32Array ? 'int32' : 'float32';
    }
    const t = TYPES[type];
    if (!t) throw new TypeError(`unsupported tensor type '${type}'; expected one of ${Object.keys(TYPES).join(', ')}`);
    if (Array.isArray(data)) {
      data = type === 'int64' ? BigInt64Array.from(data, (x) => BigInt(x)) : t.array.from(data, (x) => (type === 'bool' ? (x ? 1 : 0) : x));
    }
    if (!(data instanceof t.array)) {
      throw new TypeError(`a ${type} tensor needs a ${t.array.name}; got ${data?.constructor?.name}`);
    }
    dims = dims === undefined ? [data.length] : Array.from(dims, Number);
    const size = dims.reduce((a, b) => a * b, 1);
    if (dims.some((d) => !Number.isInteger(d) || d < 0)) throw new RangeError(`invalid dims [${dims}]`);
    if (size !== data.length) throw new RangeError(`dims [${dims}] hold ${size} elements; the data has ${data.length}`);
    this.type = type;
    this.data = data;
    this.dims = Object.freeze(dims);
    this.size = size;
  }

  static typeCode(type) {
    return TYPES[type].code;
  }

  static typeName(code) {
    const name = BY_CODE.get(code);
    if (!name) throw new TypeError(`unsupported element type code ${code}`);
    return name;
  }

  /** Copies the elements of type `code` and shape `dims` at heap offset `ptr` into a new Tensor. */
  static fromHeap(heap, code, ptr, dims) {
    const type = Tensor.typeName(code);
    const Arr = TYPES[type].array;
    const size = dims.reduce((a, b) => a * b, 1);
    const data = new Arr(size);
    ptr >>>= 0; // past 2 GB, the i32 the core returned is negative
    if (size) new Uint8Array(data.buffer).set(heap.subarray(ptr, ptr + size * Arr.BYTES_PER_ELEMENT));
    return new Tensor(type, data, dims);
  }
}
