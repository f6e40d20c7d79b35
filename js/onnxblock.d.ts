// Type declarations for js/onnxblock.js: compose custom losses from blocks, as ONNX Runtime's
// Python onnxblock does. Blocks add nodes only while `artifacts.generateArtifacts` builds the
// loss (`options.loss` is the Block); the values they take and return are value names.

/**
 * A building block. Instances are callable: `block(...inputs)` runs `build(...inputs)`, which
 * adds the block's nodes to the model being prepared and returns the name(s) of its output(s).
 *
 * Subclass it and implement `build`:
 * ```ts
 * class WeightedAverageLoss extends onnxblock.Block {
 *   _loss1 = new onnxblock.loss.MSELoss();
 *   ...
 *   build(name1: string, name2: string) { return this._add(...); }
 * }
 * ```
 * `Out` is what `build` returns: a value name (default) or several.
 */
export interface Block<Out = string> extends BlockMembers<Out> {
  (...inputs: any[]): Out;
}

/** The members every block has (the built-in blocks narrow their call signatures). */
export interface BlockMembers<Out = string> {
  /** Same as calling the block. */
  call(...inputs: any[]): Out;
  /** Adds the block's nodes; returns its output name(s). Subclasses implement it. */
  build(...inputs: any[]): Out;
}

export interface BlockConstructor {
  new <Out = string>(): Block<Out>;
  readonly prototype: Block<any>;
}

export declare const Block: BlockConstructor;

/** An elementary block: one ONNX node of a fixed op type, taking value names. */
export interface OpBlock extends BlockMembers<string> {
  (...inputs: string[]): string;
  call(...inputs: string[]): string;
  build(...inputs: string[]): string;
  /** The ONNX op type. */
  readonly opType: string;
  /** The node's attributes: numbers (int if integral, else float), strings and int lists. */
  readonly attrs: OpAttributes;
  /** The op's domain ('' for the default ONNX domain). */
  readonly domain: string;
}

/** ONNX node attributes: a number is an int when integral, else a float; arrays are int lists. */
export type OpAttributes = { [name: string]: number | string | number[] };

/** `new blocks.Add()(a, b)`: the class of an elementary block; attributes as an object. */
export interface OpBlockConstructor {
  new (attrs?: OpAttributes): OpBlock;
  readonly prototype: OpBlock;
}

/** `Pow(x)` raises to the fixed exponent (default 2); `Pow(x, e)` to the tensor exponent `e`. */
export interface PowBlock extends BlockMembers<string> {
  (x: string, exponent?: string): string;
  call(x: string, exponent?: string): string;
  build(x: string, exponent?: string): string;
  readonly exponent: number;
}

/** A float constant (a scalar for a number, 1-D for an array): `new Constant(0.4)()` returns its name. */
export interface ConstantBlock extends BlockMembers<string> {
  (): string;
  call(): string;
  build(): string;
  readonly value: number | ArrayLike<number>;
}

export interface ReduceOptions {
  /** The axes to reduce (default: every axis). */
  axes?: readonly number[] | undefined;
  /** Keep reduced axes with size 1 (default false). */
  keepdims?: boolean | undefined;
}

/** ReduceMean / ReduceSum over `axes` (default: every axis). */
export interface ReduceBlock extends BlockMembers<string> {
  (x: string): string;
  call(x: string): string;
  build(x: string): string;
  readonly axes: readonly number[] | undefined;
  readonly keepdims: boolean;
}

/** Elementary blocks. */
export declare const blocks: {
  Add: OpBlockConstructor;
  Sub: OpBlockConstructor;
  Mul: OpBlockConstructor;
  Div: OpBlockConstructor;
  Abs: OpBlockConstructor;
  Neg: OpBlockConstructor;
  Exp: OpBlockConstructor;
  Log: OpBlockConstructor;
  Sqrt: OpBlockConstructor;
  Relu: OpBlockConstructor;
  Sigmoid: OpBlockConstructor;
  Tanh: OpBlockConstructor;
  Softplus: OpBlockConstructor;
  Sum: OpBlockConstructor;
  Pow: { new (exponent?: number): PowBlock; readonly prototype: PowBlock };
  Constant: { new (value: number | ArrayLike<number>): ConstantBlock; readonly prototype: ConstantBlock };
  ReduceMean: { new (options?: ReduceOptions): ReduceBlock; readonly prototype: ReduceBlock };
  ReduceSum: { new (options?: ReduceOptions): ReduceBlock; readonly prototype: ReduceBlock };
};

/** How a loss reduces over elements. */
export type Reduction = 'mean' | 'sum' | 'none';

/**
 * The loss target: its graph input name, or `{ targetName }` (`target_name` as in Python is
 * accepted too). The input is added to the training model once per name, shaped like the loss
 * input (CrossEntropyLoss: int32 labels, the scores' shape without axis 1).
 */
export type LossTarget = string | { targetName?: string | undefined; target_name?: string | undefined };

/** A loss block: `loss(inputName, target)` returns the loss value's name. */
export interface LossBlock extends BlockMembers<string> {
  (input: string, target?: LossTarget): string;
  call(input: string, target?: LossTarget): string;
  build(input: string, target?: LossTarget): string;
  readonly reduction: Reduction;
}

export interface MSELossBlock extends LossBlock {}
export interface L1LossBlock extends LossBlock {}
export interface CrossEntropyLossBlock extends LossBlock {
  readonly weight: ArrayLike<number> | undefined;
  readonly ignoreIndex: number | undefined;
}
export interface BCEWithLogitsLossBlock extends LossBlock {
  readonly weight: ArrayLike<number> | undefined;
  readonly posWeight: ArrayLike<number> | undefined;
}

export interface CrossEntropyLossOptions {
  /** Per-class weights. */
  weight?: ArrayLike<number> | undefined;
  reduction?: Reduction | undefined;
  ignoreIndex?: number | undefined;
  /** Python's spelling, accepted too. */
  ignore_index?: number | undefined;
}

export interface BCEWithLogitsLossOptions {
  /** Per-element weights (broadcast over the loss input). */
  weight?: ArrayLike<number> | undefined;
  reduction?: Reduction | undefined;
  /** Weights of positive examples, per class. */
  posWeight?: ArrayLike<number> | undefined;
  /** Python's spelling, accepted too. */
  pos_weight?: ArrayLike<number> | undefined;
}

/** MSELoss / L1Loss take a reduction, as a string or as `{ reduction }`. */
export type SimpleLossOptions = Reduction | { reduction?: Reduction | undefined };

/** Loss blocks (default target names: `'target'`, and `'labels'` for CrossEntropyLoss). */
export declare const loss: {
  MSELoss: { new (options?: SimpleLossOptions): MSELossBlock; readonly prototype: MSELossBlock };
  L1Loss: { new (options?: SimpleLossOptions): L1LossBlock; readonly prototype: L1LossBlock };
  CrossEntropyLoss: { new (options?: Reduction | CrossEntropyLossOptions): CrossEntropyLossBlock; readonly prototype: CrossEntropyLossBlock };
  BCEWithLogitsLoss: { new (options?: Reduction | BCEWithLogitsLossOptions): BCEWithLogitsLossBlock; readonly prototype: BCEWithLogitsLossBlock };
};

/** A forward model built by {@link buildModel}: its ONNX bytes and its input/output names. */
export declare class OnnxblockModel {
  private constructor();
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly inputNames: string[];
  readonly outputNames: string[];
}

/**
 * Builds a forward model by stacking blocks on a base model (ONNX Runtime's ForwardBlock idea):
 * `block(...baseOutputNames)` adds nodes and returns the new output name(s). The result goes
 * wherever a model is accepted (generateArtifacts; `.bytes` for InferenceSession).
 */
export declare function buildModel(
  base: import('./session.js').BytesSource | OnnxblockModel,
  block: Block,
  options?: import('./session.js').ModelOptions,
): Promise<OnnxblockModel>;
