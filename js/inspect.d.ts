// Type declarations of js/inspect.js: what a model or checkpoint declares.
import type { BytesSource, ExternalDataFile } from './session.js';
import type { InitOptions } from './core.js';

export interface InspectOptions extends InitOptions {
  /** Side files of a model saved with external data, when they are not beside it. */
  externalData?: ExternalDataFile[];
}

/** A model input or output: dtype like 'float32' ('seq(float32)' for a sequence of tensors); shape null when not given, a dim a number or its symbolic name ('?' when unnamed). */
export interface InspectedValue {
  name: string;
  dtype: string | null;
  shape: (number | string)[] | null;
}

export interface InspectedModel {
  kind: 'model';
  producer: string;
  irVersion: number;
  /** Opset version by domain ('ai.onnx' for the default one). */
  opsets: Record<string, number>;
  inputs: InspectedValue[];
  outputs: InspectedValue[];
  /** Each op type the graph uses: its node count and what webtrain has for it. */
  ops: { op: string; domain: string; nodes: number; webtrain: 'not supported' | 'forward only' | 'forward + gradient' }[];
  initializers: { name: string; dtype: string | null; shape: number[]; elements: number }[];
  parameterElements: number;
}

export interface InspectedCheckpoint {
  kind: 'checkpoint';
  parameters: { name: string; shape: number[]; elements: number; trainable: boolean }[];
  trainableElements: number;
  frozenElements: number;
  properties: Record<string, number | string>;
  optimizerState: { step: number; initialLearningRate: number; momentsPerParameter: number } | null;
}

/**
 * What a model or a checkpoint (recognised by its content) declares, without planning or
 * training it: a model's inputs, outputs, ops (and whether webtrain runs and differentiates
 * them), initializers and opsets; a checkpoint's parameters, properties and optimizer state. A
 * model's side files are read (a tensor they do not hold is an error naming it). Throws a
 * WebtrainError for a source that is neither.
 */
export declare function inspect(source: BytesSource, options?: InspectOptions): Promise<InspectedModel | InspectedCheckpoint>;
