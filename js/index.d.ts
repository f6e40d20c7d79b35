// webtrain: train ONNX models in WebAssembly, in the browser or in Node.js.
// Type declarations of the package's public API (js/index.js).
export { init, runtimeInfo, WebtrainError } from './core.js';
export type { InitOptions, RuntimeInfo, Core } from './core.js';
export { Tensor } from './tensor.js';
export type { TensorType, TensorData, TensorDataTypeMap, TensorElementTypeMap, TensorLike, TensorConstructor } from './tensor.js';
export { InferenceSession } from './session.js';
export type { BytesSource, ExternalDataFile, ModelOptions } from './session.js';
export { CheckpointState, Module, Optimizer, LinearLRScheduler } from './training.js';
export type {
  BytesDestination,
  Parameter,
  Parameters,
  Properties,
  PropertyValue,
  SaveCheckpointOptions,
  LoadCheckpointOptions,
  LoadProgress,
  ExportOptions,
  ModuleOptions,
  ModuleInput,
  NamedModuleInputs,
  ModuleMode,
  RunResult,
  AllOutputs,
  ModuleBackend,
  OnBackend,
} from './training.js';
export { fit, trainEpochs } from './loop.js';
export type { TrainEpochsOptions, TrainEpochsResult, TrainProgress, TrainLoopOptions } from './loop.js';
export type { FitOptions, FitResult, FitEpoch, FitBatch, Metric, EarlyStoppingOptions } from './loop.js';
export { inspect } from './inspect.js';
export type { InspectOptions, InspectedModel, InspectedCheckpoint, InspectedValue } from './inspect.js';
export * as artifacts from './artifacts.js';
export * as onnxblock from './onnxblock.js';
