// Type declarations for js/tensor.js.
import type { DType } from './abi.js';

/** The element types webtrain's tensors hold (`float16`: bits in a Uint16Array, frozen weights only). */
export type TensorType = 'float32' | 'int32' | 'int64' | 'bool' | 'float16';

/** The typed array behind each element type (`bool` is one byte per element, 0 or 1). */
export interface TensorDataTypeMap {
  float32: Float32Array;
  int32: Int32Array;
  int64: BigInt64Array;
  bool: Uint8Array;
  float16: Uint16Array;
}

/** What a plain array passed to `new Tensor(type, array, dims)` may hold, per element type. */
export interface TensorElementTypeMap {
  float32: number;
  int32: number;
  int64: number | bigint;
  bool: boolean | number;
  float16: number;
}

/** Any of the typed arrays a tensor can hold. */
export type TensorData = TensorDataTypeMap[TensorType];

/** A typed array with a shape and an element type, as onnxruntime-web's Tensor. */
export interface Tensor<T extends TensorType = TensorType> {
  /** The element type. */
  readonly type: T;
  /** The elements, row-major (the array itself, not a copy: outputs are already copies). */
  readonly data: TensorDataTypeMap[T];
  /** The shape (frozen). */
  readonly dims: readonly number[];
  /** The number of elements: the product of `dims`. */
  readonly size: number;
}

export interface TensorConstructor {
  /**
   * `new Tensor(type, data, dims)`: `data` is the typed array of `type` (used as is, not copied)
   * or a plain array (converted). `dims` defaults to `[data.length]`.
   * Throws a TypeError for an unsupported type or the wrong array, a RangeError when `dims`
   * are invalid or do not match the number of elements.
   */
  new <T extends TensorType>(type: T, data: TensorDataTypeMap[T] | readonly TensorElementTypeMap[T][], dims?: readonly number[]): Tensor<T>;
  /** `new Tensor(data, dims)`: a float32 tensor from a Float32Array or an array of numbers. */
  new (data: Float32Array | readonly number[], dims?: readonly number[]): Tensor<'float32'>;
  /** `new Tensor(data, dims)`: an int32 tensor. */
  new (data: Int32Array, dims?: readonly number[]): Tensor<'int32'>;
  /** `new Tensor(data, dims)`: an int64 tensor. */
  new (data: BigInt64Array, dims?: readonly number[]): Tensor<'int64'>;
  readonly prototype: Tensor;
  /** The ONNX element type code of a type name (enum wt_dtype, js/abi.js DType: float32 → FLOAT, int32 → INT32, int64 → INT64, bool → BOOL, float16 → FLOAT16). */
  typeCode(type: TensorType): (typeof DType)[Exclude<keyof typeof DType, 'UNDEFINED'>];
  /** The type name of an ONNX element type code; throws a TypeError for unsupported codes. */
  typeName(code: number): TensorType;
  /** Copies `dims`-many elements of ONNX type `code` at byte offset `ptr` of `heap` into a new Tensor. */
  fromHeap(heap: Uint8Array, code: number, ptr: number, dims: readonly number[]): Tensor;
}

export declare const Tensor: TensorConstructor;

/**
 * What model inputs accept besides a {@link Tensor}: an object shaped like onnxruntime-web's
 * Tensor. Without `type`, the type follows the typed array (Float32Array → float32,
 * Int32Array → int32, BigInt64Array → int64, Uint8Array → bool); a plain array needs `type`.
 */
export interface TensorLike {
  type?: string | undefined;
  data: TensorData | readonly (number | bigint | boolean)[];
  dims: readonly number[];
}
