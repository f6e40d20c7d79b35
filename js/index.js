// webtrain: train ONNX models in WebAssembly, in the browser or in Node.js.
export { init, runtimeInfo, WebtrainError } from './core.js';
export { Tensor } from './tensor.js';
export { InferenceSession } from './session.js';
export { CheckpointState, Module, Optimizer, LinearLRScheduler } from './training.js';
export { fit, trainEpochs } from './loop.js';
export { inspect } from './inspect.js';
export * as artifacts from './artifacts.js';
export * as onnxblock from './onnxblock.js';
