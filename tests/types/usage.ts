// A program using webtrain's whole public API as a user would: type-checked against the shipped
// declarations by tests/js/types.test.mjs (`tsc --noEmit -p tests/types`), never executed.
// Lines marked @ts-expect-error are misuses the declarations must reject (tsc fails when such a
// line stops being an error).
import {
  CheckpointState,
  InferenceSession,
  LinearLRScheduler,
  Module,
  Optimizer,
  Tensor,
  WebtrainError,
  artifacts,
  fit,
  init,
  onnxblock,
  runtimeInfo,
} from 'webtrain';
import type {
  BytesDestination,
  BytesSource,
  ExternalDataFile,
  ModelOptions,
  Core,
  InitOptions,
  ModuleInput,
  ModuleBackend,
  Parameter,
  PropertyValue,
  RuntimeInfo,
  TensorLike,
  TensorType,
} from 'webtrain';
import * as ort from 'onnxruntime-web';
import * as webtrain from 'webtrain';

// ---- init --------------------------------------------------------------------------------------
const initOptions: InitOptions = { wasmUrl: new URL('https://example.com/webtrain-core.wasm') };
const core: Core = await init(initOptions);
const simd: string = core.simdName();
await init({ wasmBinary: new Uint8Array(8) });
await init({ threads: 'auto' });
await init({ threads: 4, threadedUrl: '/assets/webtrain-mt/webtrain-core-mt.mjs' });
// @ts-expect-error threads is 'auto' or a number
await init({ threads: 'max' });
await init({ simd: 'relaxed' });
await init({ threads: 2, simd: 'simd128' });
// @ts-expect-error simd is 'auto', 'relaxed' or 'simd128'
await init({ simd: 'fma' });
const info: RuntimeInfo | null = runtimeInfo();
if (info) {
  const threadCount: number = info.threads;
  const build: 'single' | 'threaded' = info.build;
  const isolated: boolean = info.crossOriginIsolated;
  const simdName: string = info.simd;
  void [threadCount, build, isolated, simdName];
}

// ---- Tensor ------------------------------------------------------------------------------------
const x = new Tensor('float32', new Float32Array(8 * 784), [8, 784]);
const xData: Float32Array = x.data;
const xType: 'float32' = x.type;
const rows: number = x.dims[0] * x.size;
const labels64 = new Tensor('int64', new BigInt64Array(8), [8]);
const labels32 = new Tensor(new Int32Array([1, 2, 3, 4, 5, 6, 7, 8]));
const labels32Data: Int32Array = labels32.data;
const fromNumbers: Tensor<'float32'> = new Tensor([1, 2, 3, 4], [2, 2]);
const fromBigInts: Tensor<'int64'> = new Tensor('int64', [1n, 2, 3n]);
const mask: Tensor<'bool'> = new Tensor('bool', [true, false, 1, 0], [4]);
const inferred: Tensor<'int64'> = new Tensor(new BigInt64Array(3));
const anyTensor: Tensor = mask;
const code: number = Tensor.typeCode('int64');
const typeName: TensorType = Tensor.typeName(code);
// @ts-expect-error a float32 tensor needs a Float32Array
new Tensor('float32', new Int32Array(4));
// @ts-expect-error unsupported element type
new Tensor('float64', new Float64Array(4));
// float16: the bits in a Uint16Array
const half: Tensor<'float16'> = new Tensor('float16', new Uint16Array(4));
// @ts-expect-error a float16 tensor needs a Uint16Array
new Tensor('float16', new Float32Array(4));
// @ts-expect-error dims are numbers
new Tensor('float32', new Float32Array(4), ['2', '2']);
// @ts-expect-error tensors are read-only views of their data
x.dims = [1];

// ---- InferenceSession --------------------------------------------------------------------------
const session = await InferenceSession.create('model.onnx');
const sessionFromBytes = await InferenceSession.create(new Uint8Array(0), initOptions);
const names: string[] = [...session.inputNames, ...session.outputNames];
const outputs = await session.run({ input: x });
const logits: Tensor | undefined = outputs.output;
const syncOutputs: Record<string, Tensor> = session.runSync({ input: x });
const arena: number = session.arenaBytes;
session.release();
sessionFromBytes.release();
// external data: side files given as bytes, Blobs, URLs or paths
const side: ExternalDataFile[] = [{ path: 'model.onnx.data', data: new Uint8Array(0) }, { path: 'b.data', data: new Blob([]) }, { path: 'c.data', data: new URL('https://example.com/c.data') }];
const withSide = await InferenceSession.create(new Uint8Array(0), { externalData: side, threads: 1 });
withSide.release();
const sideOptions: ModelOptions = { externalData: [{ path: 'd.data', data: 'weights/d.data' }] };
void sideOptions;
// @ts-expect-error externalData entries are { path, data } with bytes, a Blob, a URL or a path
await InferenceSession.create('model.onnx', { externalData: [{ path: 'x.data', data: 42 }] });
// @ts-expect-error sessions are made by InferenceSession.create
new InferenceSession();

// ---- artifacts ---------------------------------------------------------------------------------
const lossKind: artifacts.LossType = artifacts.LossType.CrossEntropyLoss;
const optimKind: artifacts.OptimType = artifacts.OptimType.AdamW;
const generated: artifacts.Artifacts = await artifacts.generateArtifacts('model.onnx', {
  requiresGrad: ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'],
  frozenParams: [],
  loss: lossKind,
  optimizer: optimKind,
});
const { trainingModel, evalModel, optimizerModel, checkpoint } = generated;
const maybeNominal: Uint8Array | undefined = generated.nominalCheckpoint;
await artifacts.generateArtifacts(new URL('file:///models/model.onnx'), {
  requiresGrad: ['fc2.weight'],
  frozenParams: ['fc1.weight'],
  loss: { type: 'CrossEntropyLoss', reduction: 'sum', ignoreIndex: -100, weight: [1, 2, 3] },
  optimizer: { type: 'AdamW', betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, adamMode: 0, biasCorrection: true, clipGradNorm: 1 },
  additionalOutputNames: ['output'],
  artifactDirectory: 'artifacts',
  prefix: 'mnist_',
  nominalCheckpoint: true,
  wasmUrl: 'webtrain-core.wasm',
});
await artifacts.generateArtifacts(new Uint8Array(0), { loss: 'MSELoss', optimizer: 'SGD', lossInputNames: simd ? ['output'] : undefined });
const live: boolean = (await CheckpointState.loadCheckpoint(checkpoint)).isLive;
await artifacts.generateArtifacts(new ArrayBuffer(0), { loss: { type: artifacts.LossType.BCEWithLogitsLoss, posWeight: new Float32Array(3) } });
await artifacts.generateArtifacts('model_with_loss.onnx', { loss: null, optimizer: { type: artifacts.OptimType.SGD } });
// @ts-expect-error unknown loss name
await artifacts.generateArtifacts('model.onnx', { loss: 'HingeLoss' });
// @ts-expect-error reduction is mean, sum or none
await artifacts.generateArtifacts('model.onnx', { loss: { type: 'L1Loss', reduction: 'max' } });
// @ts-expect-error webtrain writes ONNX artifacts only
await artifacts.generateArtifacts('model.onnx', { ortFormat: true });
// @ts-expect-error requiresGrad is a list of names
await artifacts.generateArtifacts('model.onnx', { requiresGrad: 'fc1.weight' });

// ---- onnxblock: the reference docs' WeightedAverageLoss, in TypeScript -------------------------
class WeightedAverageLoss extends onnxblock.Block {
  private _loss1 = new onnxblock.loss.MSELoss();
  private _loss2 = new onnxblock.loss.MSELoss('mean');
  private _w1 = new onnxblock.blocks.Constant(0.4);
  private _w2 = new onnxblock.blocks.Constant(0.6);
  private _add = new onnxblock.blocks.Add();
  private _mul = new onnxblock.blocks.Mul();

  build(lossInputName1: string, lossInputName2: string): string {
    return this._add(
      this._mul(this._w1(), this._loss1(lossInputName1, { targetName: 'target1' })),
      this._mul(this._w2(), this._loss2(lossInputName2, 'target2')),
    );
  }
}
const customLoss = new WeightedAverageLoss();
const customOut: string = customLoss('out1', 'out2');
await artifacts.generateArtifacts('two_outputs.onnx', {
  requiresGrad: ['fc.weight'],
  loss: customLoss,
  lossInputNames: ['out1', 'out2'],
  optimizer: artifacts.OptimType.AdamW,
});

/** A block with two outputs, and one composing every elementary block. */
class Pair extends onnxblock.Block<string[]> {
  build(a: string, b: string): string[] {
    return [new onnxblock.blocks.Sub()(a, b), new onnxblock.blocks.Div()(a, b)];
  }
}
class Everything extends onnxblock.Block {
  private pair = new Pair();
  build(x: string, y: string): string {
    const { blocks, loss } = onnxblock;
    const [d, q] = this.pair(x, y);
    const unary = [blocks.Abs, blocks.Neg, blocks.Exp, blocks.Log, blocks.Sqrt, blocks.Relu, blocks.Sigmoid, blocks.Tanh, blocks.Softplus]
      .map((B) => new B()(d));
    const s = new blocks.Sum()(...unary, q);
    const p = new blocks.Pow(3)(s);
    const pe = new blocks.Pow()(s, new blocks.Constant([1, 2])());
    const m = new blocks.ReduceMean({ axes: [1], keepdims: true })(p);
    const r = new blocks.ReduceSum()(new blocks.Add()(m, pe));
    const attrOp = new blocks.Add({ note: 'x', ints: [1, 2], f: 0.5 });
    const opType: string = attrOp.opType;
    const ce = new loss.CrossEntropyLoss({ weight: [1, 2], reduction: 'mean', ignoreIndex: -1 })(x, 'labels');
    const bce = new loss.BCEWithLogitsLoss({ weight: new Float32Array(2), posWeight: [2, 2], reduction: 'sum' })(y, { target_name: 't' });
    const l1 = new loss.L1Loss('none')(x);
    return new blocks.Add()(r, ce, bce, l1);
  }
}
await artifacts.generateArtifacts('model.onnx', { loss: new Everything() });
await artifacts.generateArtifacts('model.onnx', { loss: new onnxblock.loss.MSELoss() });
const isBlock: boolean = customLoss instanceof onnxblock.Block;
// @ts-expect-error elementary blocks take value names
new onnxblock.blocks.Add()(1, 2);
// @ts-expect-error loss reductions are mean, sum or none
new onnxblock.loss.MSELoss('max');
// @ts-expect-error CrossEntropyLoss options are an object
new onnxblock.loss.CrossEntropyLoss([1, 2]);

// ---- CheckpointState ---------------------------------------------------------------------------
const state = await CheckpointState.loadCheckpoint(checkpoint);
await CheckpointState.loadCheckpoint('artifacts/mnist_checkpoint', initOptions);
const params = state.parameters;
const count: number = params.size;
const hasBias: boolean = params.has('fc1.bias');
const bias: Parameter | undefined = params.get('fc1.bias');
if (bias) {
  const values: Float32Array = bias.data;
  const grad: Float32Array | null = bias.grad;
  const trainable: boolean = bias.requiresGrad;
  const shape: number[] = bias.dims;
  const paramName: string = bias.name;
  params.set('fc1.bias', new Float32Array(values.length));
  params.set('fc1.bias', Array.from(values, (v) => v * 0.5));
}
for (const [paramName, p] of params) console.log(paramName, p.dims, p.requiresGrad);
const allNames: string[] = [...params.keys()];
const allParams: Parameter[] = [...params.values()];
const asMap = new Map(params.entries());
// @ts-expect-error parameter values are numbers
params.set('fc1.bias', ['0']);

const props = state.properties;
props.set('epoch', 3);
props.set('bigEpoch', 3n);
props.set('lr', 0.001);
props.set('one', 1, 'float');
props.set('dataset', 'mnist');
const epoch: PropertyValue | undefined = props.get('epoch');
const hasEpoch: boolean = props.has('epoch') && props.size > 0;
for (const [propName, value] of props) console.log(propName, typeof value === 'string' ? value : value.toFixed(3));
const propEntries: [string, PropertyValue][] = [...props.entries()];
// @ts-expect-error properties are int, float or string
props.set('flag', true);

// ---- Module, Optimizer, LinearLRScheduler --------------------------------------------------------
const module = await Module.create(trainingModel, state, evalModel);
await Module.create('artifacts/mnist_training_model.onnx', state);
const optimizer = await Optimizer.create(optimizerModel!, module);
const scheduler = new LinearLRScheduler(optimizer, 10, 100, 0.001);
new LinearLRScheduler(optimizer, 0, 100);
optimizer.setLearningRate(0.01);
const lr: number = optimizer.getLearningRate();
const sameModule: Module = optimizer.module;
const sameState: CheckpointState = module.state;

const trainInputs: string[] = module.train().inputNames();
const evalOutputs: string[] = module.outputNames(1);
for (let step = 0; step < 10; step++) {
  const result = module.run(x, labels64);
  const loss = result instanceof Tensor ? result : result[0];
  console.log(Number(loss.data[0]));
  optimizer.step();
  scheduler.step();
  module.lazyResetGrad();
}
const named = module.run({ input: x, labels: labels32 });
module.run(new Map<string, ModuleInput>([['input', x], ['labels', labels32]]));
const ortLike: TensorLike = { type: 'float32', data: xData, dims: [8, 784] };
module.run(ortLike, { data: new Int32Array(8), dims: [8] });
module.run(xData, new BigInt64Array(8));
// onnxruntime-web's tensors are accepted as they are.
module.run(new ort.Tensor('float32', xData, [8, 784]), new ort.Tensor('int64', new BigInt64Array(8), [8]));
const [trainLoss]: Tensor[] = module.runAll(x, labels64);
const byName: Record<string, Tensor> = module.runNamed({ input: x, labels: labels64 });
const training: boolean = module.eval().isTraining;
const [evalLoss, ...extra] = module.runAll(x, labels64);

// On webgpu the step methods return Promises (OnBackend): awaited, the same code as on wasm.
const gpuModule = await Module.create(trainingModel, state, evalModel, { backend: 'webgpu' });
const gpuOptimizer = await Optimizer.create(optimizerModel!, gpuModule);
const gpuLoss: Tensor = await gpuModule.run(x, labels32);
const gpuAll: Tensor[] = await gpuModule.runAll(x, labels32);
const gpuStep: Promise<void> = gpuOptimizer.step();
new LinearLRScheduler(gpuOptimizer, 0, 100);
// @ts-expect-error a webgpu module's run() is a Promise: await it
gpuModule.run(x, labels32).data;
const autoModule = await Module.create(trainingModel, state, evalModel, { backend: 'auto' });
const autoLoss: Tensor = await autoModule.run(x, labels32);
// @ts-expect-error with 'auto' the result may be a Promise
autoModule.run(x, labels32).dims;
const someBackend: ModuleBackend = gpuModule.backend;
await fit(gpuModule, gpuOptimizer, { x, y: labels32, batchSize: 4 });

const n: number = module.getParametersSize() + module.getParametersSize(false);
const flat: Tensor<'float32'> = module.getContiguousParameters(true);
module.copyBufferToParameters(flat);
module.copyBufferToParameters(new Float32Array(n), false);
// A loss-only module's run() is the loss, a float32 Tensor.
const lossValue: string = module.train().run(x, labels64).data[0].toFixed(4);
function anyModuleLoss(m: Module): number {
  // @ts-expect-error a Module of unknown additional outputs may return several: narrow before reading data
  m.run(x, labels64).data;
  const r = m.run(x, labels64);
  return (r instanceof Tensor ? r : r[0]).data[0] + m.runAll(x)[0].data[0];
}
anyModuleLoss(module);
// Additional outputs: run() returns [loss, ...outputs], typed from the artifacts' options or given.
const withOutput = await artifacts.generateArtifacts('model.onnx', { loss: 'CrossEntropyLoss', additionalOutputNames: ['output'] });
const outputsModule = await Module.create(withOutput.trainingModel, state, withOutput.evalModel);
const [lossT, outputT]: [Tensor<'float32'>, Tensor] = outputsModule.run(x, labels64);
const [lossA, outputA]: [Tensor<'float32'>, Tensor] = (await Module.create<['output']>('training_model.onnx', state)).runAll(x, labels64);
// @ts-expect-error a module with additional outputs returns an array
outputsModule.run(x, labels64).data;
anyModuleLoss(outputsModule);
// optimizerModel is typed present exactly when an optimizer was asked for.
const sgd = await artifacts.generateArtifacts('model.onnx', { loss: 'MSELoss', optimizer: 'SGD' });
await Optimizer.create(sgd.optimizerModel, await Module.create(sgd.trainingModel, state));
const noOptimizer = await artifacts.generateArtifacts('model.onnx', { loss: 'MSELoss' });
// @ts-expect-error no optimizer was asked for: there is no optimizer model
await Optimizer.create(noOptimizer.optimizerModel, outputsModule);
const nominal: Uint8Array = (await artifacts.generateArtifacts('model.onnx', { nominalCheckpoint: true })).nominalCheckpoint;
// Sources: Blobs, Files, Responses, URLs, paths, bytes.
await artifacts.generateArtifacts(new Blob([new Uint8Array(4)]), { loss: 'MSELoss' });
await CheckpointState.loadCheckpoint(new File([checkpoint.slice()], 'checkpoint'));
await InferenceSession.create(await fetch('https://example.com/model.onnx'));
await Module.create(new Response(trainingModel.slice()), state, new DataView(evalModel.buffer));
// @ts-expect-error a number is no model source
await InferenceSession.create(42);
// @ts-expect-error inputs are tensors, tensor-like objects or typed arrays
module.run('x', 'labels');
// @ts-expect-error parameters are float32
module.copyBufferToParameters(new Int32Array(n));

// ---- saving, exporting, errors -----------------------------------------------------------------
const ckptBytes: Uint8Array = await CheckpointState.saveCheckpoint(state, 'artifacts/ckpt', { includeOptimizerState: true });
await CheckpointState.saveCheckpoint(state, new URL('file:///tmp/ckpt'));
const sink: BytesDestination = async (bytes: Uint8Array) => {
  await new Blob([bytes.slice()]).arrayBuffer();
};
await CheckpointState.saveCheckpoint(state, sink);
const inMemory: Uint8Array = await CheckpointState.saveCheckpoint(state);
const raw: Uint8Array = state.toBytes({ includeOptimizerState: false });
const inference: Uint8Array = await module.exportModelForInferencing(['output']);
await module.exportModelForInferencing('inference.onnx', ['output']);
const exported = await InferenceSession.create(inference);
// @ts-expect-error the output names are a list
await module.exportModelForInferencing('inference.onnx', 'output');
// Returned bytes are backed by an ArrayBuffer: a Blob (strict, TypeScript 5.7+ lib) takes them as they are.
const files: Blob[] = [
  new Blob([await module.exportModelForInferencing(['output'])]),
  new Blob([await CheckpointState.saveCheckpoint(state)]),
  new Blob([state.toBytes()]),
  new Blob([checkpoint, trainingModel, evalModel]),
];
// Forward-only runs on the current parameters: the model's outputs by name.
const predicted: Record<string, Tensor> = module.predict({ input: new Tensor(new Float32Array(4), [1, 4]) });
module.predict(new Tensor(new Float32Array(4), [1, 4]), ['output']);
// @ts-expect-error the output names are a list
module.predict({ input: new Tensor(new Float32Array(4), [1, 4]) }, 'output');
const moduleLive: boolean = module.isLive && optimizer.isLive;

try {
  await CheckpointState.loadCheckpoint(new Uint8Array([1, 2, 3]));
} catch (err) {
  if (err instanceof WebtrainError) console.error(err.name, err.message);
}

scheduler.step();
exported.release();
optimizer.release();
module.release();
state.release();

function bytesOf(source: BytesSource): BytesSource {
  return source;
}
bytesOf(new DataView(new ArrayBuffer(4)));
export { simd, rows, anyTensor, logits, names, arena, syncOutputs, maybeNominal, customOut, isBlock, count, hasBias, allNames, allParams, asMap };
export { epoch, hasEpoch, propEntries, lr, sameModule, sameState, trainInputs, evalOutputs, named, trainLoss, byName, training, evalLoss, extra };
export { live, ckptBytes, inMemory, raw, xType, labels32Data, fromNumbers, fromBigInts, inferred, typeName };

// ---- onnxblock.buildModel: a forward model on a base model, then artifacts from it -----------
async function builtModel(): Promise<number> {
  const built: onnxblock.OnnxblockModel = await onnxblock.buildModel('base.onnx', new onnxblock.blocks.Relu());
  const names: string[] = built.outputNames;
  await artifacts.generateArtifacts(built, { loss: artifacts.LossType.CrossEntropyLoss });
  return names.length + built.bytes.byteLength;
}
export { builtModel };

// trainEpochs (js/loop.js): the loop shared by Node, pages and the worker.
{
  const run = async (module: webtrain.Module, optimizer: webtrain.Optimizer) => {
    const r: webtrain.TrainEpochsResult = await webtrain.trainEpochs({
      module,
      optimizer,
      inputs: [new webtrain.Tensor('float32', new Float32Array(8), [2, 4])],
      batchSize: 1,
      onProgress: (p: webtrain.TrainProgress) => p.loss,
      signal: new AbortController().signal,
    });
    const losses: Float32Array = r.losses;
    // @ts-expect-error module must be a Module
    await webtrain.trainEpochs({ module: {}, optimizer, inputs: [] });
    return losses;
  };
  void run;
}

// fit (js/loop.js): the loop with validation, metrics, early stopping, checkpoints.
{
  const run = async (module: webtrain.Module, optimizer: webtrain.Optimizer, x: webtrain.Tensor, y: webtrain.Tensor) => {
    const r: webtrain.FitResult = await webtrain.fit(module, optimizer, {
      x, y, batchSize: 32, epochs: 10, shuffle: true, seed: 1,
      validation: { x, y },
      metrics: ['accuracy', (outputs: webtrain.Tensor[], labels: webtrain.Tensor) => outputs.length + labels.size],
      callbacks: { onBatchEnd: (b: webtrain.FitBatch) => b.loss < 10, onEpochEnd: async (e: webtrain.FitEpoch) => e.valLoss !== undefined },
      earlyStopping: { monitor: 'valLoss', patience: 3, restoreBest: true },
      checkpoint: { path: 'run.ckpt', every: 'epoch' },
      signal: new AbortController().signal,
      onNonFinite: 'skip',
      progress: true,
    });
    const h: webtrain.FitEpoch[] = r.history;
    const stopped: null | string = r.stopped;
    // @ts-expect-error onNonFinite is 'throw', 'skip' or 'stop'
    await webtrain.fit(module, optimizer, { x, y, onNonFinite: 'ignore' });
    // @ts-expect-error metrics are names of built-in metrics or functions
    await webtrain.fit(module, optimizer, { x, y, metrics: ['f1'] });
    return [h.length, stopped, r.skipped];
  };
  void run;
}
