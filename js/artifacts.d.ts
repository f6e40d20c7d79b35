// Type declarations for js/artifacts.js: ONNX Runtime's generate_artifacts.
import type { BytesSource, ModelOptions } from './session.js';
import type { OnnxblockModel } from './onnxblock.js';
import type { Block, Reduction } from './onnxblock.js';

/** The built-in losses (ONNX Runtime's LossType numbering: enum wt_loss_type of include/webtrain.h). */
export declare const LossType: typeof import('./abi.js').LossType;
export type LossType = (typeof LossType)[keyof typeof LossType];
/** A built-in loss by name. */
export type LossName = keyof typeof LossType;

/** The optimizers (enum wt_optim_type of include/webtrain.h). */
export declare const OptimType: typeof import('./abi.js').OptimType;
export type OptimType = (typeof OptimType)[keyof typeof OptimType];
/** An optimizer by name. */
export type OptimName = keyof typeof OptimType;

/** The file each artifact is written to in artifactDirectory (after the prefix), as ONNX Runtime names them. */
export declare const fileNames: {
  readonly trainingModel: 'training_model.onnx';
  readonly evalModel: 'eval_model.onnx';
  readonly optimizerModel: 'optimizer_model.onnx';
  readonly checkpoint: 'checkpoint';
  readonly nominalCheckpoint: 'nominal_checkpoint';
};

/** A built-in loss with options. */
export interface LossOptions {
  type: LossType | LossName;
  /** Default 'mean'. */
  reduction?: Reduction | undefined;
  /** CrossEntropyLoss: labels equal to it do not contribute. */
  ignoreIndex?: number | undefined;
  /** CrossEntropyLoss: per-class weights; BCEWithLogitsLoss: per-element weights. */
  weight?: ArrayLike<number> | Iterable<number> | undefined;
  /** BCEWithLogitsLoss: weights of positive examples, per class. */
  posWeight?: ArrayLike<number> | Iterable<number> | undefined;
}

/**
 * An optimizer with options (those not given take ONNX Runtime's defaults). The learning rate is
 * not part of the optimizer model: `lr` records the initial rate in the checkpoint; change it
 * with `Optimizer.setLearningRate` or a scheduler.
 */
export interface OptimizerOptions {
  type: OptimType | OptimName;
  /** AdamW: [beta1, beta2]. */
  betas?: readonly [number, number] | undefined;
  /** AdamW: the epsilon added to the denominator. */
  eps?: number | undefined;
  /** AdamW: the decoupled weight decay. */
  weightDecay?: number | undefined;
  /** AdamW: 0 for PyTorch's AdamW, 1 for Hugging Face's (ONNX Runtime's default). */
  adamMode?: number | undefined;
  /** AdamW: bias correction of the moments (default true). */
  biasCorrection?: boolean | undefined;
  /** Clip the global gradient norm to this value before the update (0 or absent: no clipping). */
  clipGradNorm?: number | undefined;
  /** Initial learning rate, recorded in the checkpoint (default: ONNX Runtime's 1e-3). */
  lr?: number | undefined;
}

/** Which weights get LoRA adapters: a part of a weight name, a RegExp, or a test of the name. */
export type LoraTarget = string | RegExp | ((weightName: string) => boolean);

/**
 * LoRA: for each targeted MatMul/Gemm weight W, trainable `W.lora_A` [rank, in] (Kaiming-uniform)
 * and `W.lora_B` [out, rank] (zeros); the layer computes x·W + (x·Aᵀ·Bᵀ)·(alpha/rank) and the
 * base weights are frozen (requiresGrad entries train beside the adapters).
 */
export interface LoraOptions {
  /** The adapters' rank (1..65536). */
  rank: number;
  /** The scale is alpha / rank (default alpha = rank). */
  alpha?: number | undefined;
  /** Strings match parts of weight names (a bias a string matches is skipped); RegExps and functions are tested on the names of the weights MatMul/Gemm multiply by. */
  targets: LoraTarget | readonly LoraTarget[];
  /** Seeds lora_A's initial values (default 0). */
  seed?: number | undefined;
}

export interface GenerateArtifactsOptions extends ModelOptions {
  /** Low-rank adapters on a frozen base (LoRA). */
  lora?: LoraOptions | null | undefined;
  /**
   * Names of the parameters to train; left out, every float initializer is trained. An empty
   * list is an error (nothing would be trained), except with `lora`, whose adapters train.
   */
  requiresGrad?: readonly string[] | undefined;
  /** Names of the parameters kept frozen (saved in the checkpoint, not trained). */
  frozenParams?: readonly string[] | undefined;
  /**
   * 'float16': frozen float32 weights read only by MatMul, Gemm (A, B), Gather (data) and Conv (W) are
   * stored as float16 (half the memory; read through a Cast to float, widened where the kernels
   * read them); the others are listed in the result's `keptFloat32` with the reason.
   * 'float32' or absent: as they are (a float16 model's weights stay float16).
   */
  frozenDtype?: 'float16' | 'float32' | undefined;
  /**
   * The loss added on the model's output: a built-in loss (`LossType` value, name, or options),
   * an onnxblock Block (a custom loss; it is called with the `lossInputNames`, or else with the
   * model's outputs), or null/undefined when the model's first output already is the loss.
   */
  loss?: LossType | LossName | LossOptions | Block<string | string[]> | null | undefined;
  /** The optimizer model to generate; without one no optimizer model is produced. */
  optimizer?: OptimType | OptimName | OptimizerOptions | null | undefined;
  /**
   * Model outputs the training and eval models output too, after the loss. The eval model
   * outputs the model's own outputs after these either way (fit's metrics, Module.predict).
   */
  additionalOutputNames?: readonly string[] | undefined;
  /** The model values the loss is computed from (default: the model's outputs). */
  lossInputNames?: readonly string[] | undefined;
  /** Also produce a nominal checkpoint (parameter names and shapes, no values). */
  nominalCheckpoint?: boolean | undefined;
  /** ONNX Runtime's ORT format is not supported: webtrain writes ONNX artifacts only. */
  ortFormat?: false | null | undefined;
  /** Custom op libraries are not supported. */
  customOpLibrary?: null | undefined;
  /**
   * Also write the artifacts into this directory (Node; created if missing) as
   * `${prefix}training_model.onnx`, `eval_model.onnx`, `optimizer_model.onnx`, `checkpoint`
   * (and `nominal_checkpoint`).
   */
  artifactDirectory?: string | URL | undefined;
  /** File name prefix for `artifactDirectory`. */
  prefix?: string | undefined;
  /**
   * A model saved with external data: keep its frozen weights (float initializers neither trained
   * nor in frozenParams) in its side files, referred to by the training and eval models, never
   * read (true, the default); false embeds them in both models. A model with its weights inside
   * the .onnx: its frozen weights are referred to in the model file itself (at their raw_data
   * offsets) when they add up to 32 MiB or more, or when true is given explicitly; else embedded.
   */
  keepExternalData?: boolean | undefined;
}

declare const outputsBrand: unique symbol;

/**
 * The bytes of a training or eval model generated with `additionalOutputNames: E`: a
 * Uint8Array that remembers E in its type (nothing at run time), so that `Module.create` types
 * `run()` by it.
 */
export type TrainingModelBytes<E extends readonly string[] = readonly string[]> = Uint8Array<ArrayBuffer> & { readonly [outputsBrand]?: E };

/** The additional output names an options type asks for (a tuple when written literally). */
export type AdditionalOutputsOf<O> = O extends { additionalOutputNames: infer E extends readonly string[] }
  ? E
  : O extends { additionalOutputNames?: infer E extends readonly string[] } ? ('additionalOutputNames' extends RequiredKeys<O> ? E : [] | E) : [];

type RequiredKeys<O> = { [K in keyof O]-?: {} extends Pick<O, K> ? never : K }[keyof O];

/** `Uint8Array` when `P` (an option's type) surely holds a value, `undefined` when surely not, else either. */
type BytesIf<P> = [P] extends [null | undefined] ? undefined : null extends P ? Uint8Array<ArrayBuffer> | undefined : undefined extends P ? Uint8Array<ArrayBuffer> | undefined : Uint8Array<ArrayBuffer>;

/** An option's type in O: `undefined` when O has no such key, the value's type (with `undefined` when optional) otherwise. */
type OptionOf<O, K extends string> = K extends keyof O ? (K extends RequiredKeys<O> ? O[K] : O[K] | undefined) : undefined;

/**
 * The generated artifacts, as bytes. With the options' type O (what `generateArtifacts` was
 * given), `optimizerModel` is typed present when an optimizer was asked for, and
 * `nominalCheckpoint` when `nominalCheckpoint: true`.
 */
export interface Artifacts<O extends GenerateArtifactsOptions = GenerateArtifactsOptions> {
  trainingModel: TrainingModelBytes<AdditionalOutputsOf<O>>;
  evalModel: TrainingModelBytes<AdditionalOutputsOf<O>>;
  /** Absent when no optimizer was asked for. */
  optimizerModel: BytesIf<OptionOf<O, 'optimizer'>>;
  checkpoint: Uint8Array<ArrayBuffer>;
  /** Present with `nominalCheckpoint: true`. */
  nominalCheckpoint: BytesIf<Exclude<OptionOf<O, 'nominalCheckpoint'>, false>>;
  /** With `frozenDtype: 'float16'`: the frozen float32 weights that stayed float32, and why. */
  keptFloat32?: { name: string; reason: string }[];
}

/**
 * From a forward-only ONNX model (a path, URL, bytes, Blob, File or Response) to the training,
 * eval and optimizer models and the checkpoint; resolves to their bytes, and also writes them to
 * `artifactDirectory` when given.
 */
export declare function generateArtifacts<const O extends GenerateArtifactsOptions = {}>(model: BytesSource | OnnxblockModel, options?: O): Promise<Artifacts<O>>;
