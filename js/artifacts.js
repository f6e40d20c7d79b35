// artifacts.generateArtifacts: from a forward-only ONNX model to the training, eval and
// optimizer models and the checkpoint, in the C core (ONNX Runtime's generate_artifacts).
import { coreFor, WebtrainError } from './core.js';
import { checkOptions, MODEL_OPTIONS } from './options.js';
import { writeBytes } from './storage.js';
import { importNode, isNode } from './node-builtin.js';
import { Block, withBuilder } from './onnxblock.js';
import { withGenerator } from './builder.js';
import { setLora } from './lora.js';
import { externalDataOption, externalReaders, placeSideFiles, rememberSource, Ranges } from './external.js';
import { readModel } from './inside.js';
import { DType, LossType, OptimType, Loss, Optim, NameList, LossWeights, GenResult, fieldName } from './abi.js';

export { LossType, OptimType };

/** Float tensors in external data below this many bytes are read ahead whether named or not. */
const READ_AHEAD_SMALL = 2 ** 20;

/**
 * A loss or optimizer option -> { type, ...options }: absent (`none`), a kind number, a name of
 * `names` (LossType, OptimType), or an options object whose type is either.
 */
function kindOptions(value, names, none, what, invalid, keys) {
  if (value === undefined || value === null) return { type: none };
  if (typeof value === 'number') return { type: value };
  if (typeof value === 'string') {
    if (!(value in names)) throw new WebtrainError(`unknown ${what} '${value}'; expected ${what === 'loss' ? `one of ${Object.keys(names).join(', ')} or an onnxblock.Block` : Object.keys(names).join(' or ')}`);
    return { type: names[value] };
  }
  if (invalid && typeof value !== 'object') throw new WebtrainError(invalid);
  checkOptions(value, keys, `generateArtifacts' ${what}`);
  return { ...value, type: typeof value.type === 'string' ? names[value.type] : value.type };
}

/** generateArtifacts' options (js/artifacts.d.ts GenerateArtifactsOptions). */
const GENERATE_OPTIONS = [
  ...MODEL_OPTIONS, 'lora', 'requiresGrad', 'frozenParams', 'frozenDtype', 'loss', 'optimizer', 'additionalOutputNames', 'lossInputNames',
  'nominalCheckpoint', 'ortFormat', 'customOpLibrary', 'artifactDirectory', 'prefix', 'keepExternalData',
];
/** A loss given as an options object (LossOptions). */
const LOSS_OPTIONS = ['type', 'reduction', 'ignoreIndex', 'weight', 'posWeight'];
/** An optimizer given as an options object (OptimizerOptions). */
const OPTIMIZER_OPTIONS = ['type', 'betas', 'eps', 'weightDecay', 'adamMode', 'biasCorrection', 'clipGradNorm', 'lr'];

const lossOptions = (loss) => kindOptions(loss, LossType, Loss.NONE, 'loss', 'loss: expected an artifacts.LossType, an options object or an onnxblock.Block', LOSS_OPTIONS);
const optimOptions = (opt) => kindOptions(opt, OptimType, Optim.NONE, 'optimizer', undefined, OPTIMIZER_OPTIONS);

/**
 * generateArtifacts(model, options) -> { trainingModel, evalModel, optimizerModel, checkpoint,
 * nominalCheckpoint? } (Uint8Arrays); with `artifactDirectory` the files are also written
 * there, named `${prefix}training_model.onnx` ... as ONNX Runtime names them.
 *
 * A model saved with external data: its frozen weights (float initializers neither trained nor
 * listed in frozenParams) stay in its side files, never read (keepExternalData: true, the
 * default): the training and eval models refer to them, and the returned bytes remember where
 * they are for Module.create / InferenceSession.create; an artifactDirectory gets the side files
 * beside the artifacts (linked, else copied). keepExternalData: false embeds them as before.
 * A model with its weights inside the .onnx (js/inside.js) is treated alike, its own file playing
 * the side file, from 32 MiB of weights on or with keepExternalData: true given.
 */
export async function generateArtifacts(model, options = {}) {
  checkOptions(options, GENERATE_OPTIONS, 'generateArtifacts');
  options ??= {};
  if (Array.isArray(options.requiresGrad) && options.requiresGrad.length === 0 && (options.lora === undefined || options.lora === null)) {
    throw new WebtrainError(
      "generateArtifacts: requiresGrad is empty, so nothing would be trained: leave requiresGrad out to train every float initializer, or name the parameters to train (e.g. requiresGrad: ['fc.weight', 'fc.bias'])",
    );
  }
  const half = frozenDtypeOption(options.frozenDtype);
  const core = await coreFor(options);
  const entries = externalDataOption(options.externalData, 'generateArtifacts');
  const keepExternal = options.keepExternalData ?? true;
  if (typeof keepExternal !== 'boolean') throw new TypeError(`generateArtifacts: keepExternalData must be true or false; got ${typeof keepExternal === 'string' ? `'${keepExternal}'` : String(keepExternal)}`);
  // By reference, a URL's or Blob's side file is fetched only in the ranges generation reads: the
  // parameters named (all float tensors when requiresGrad is not given), tensors of other dtypes
  // than float and float16
  // (read with the model: shapes may fold from them) and small float tensors (BatchNorm's running
  // statistics become frozen parameters unnamed). With lora, the base is read by no one (the
  // adapters are new).
  const named = new Set([...(options.requiresGrad ?? []), ...(options.frozenParams ?? [])]);
  const readAhead = keepExternal && (options.requiresGrad?.length || options.lora) && !half ? (r) => (r.dtype !== DType.FLOAT && r.dtype !== DType.FLOAT16) || named.has(r.tensor) || r.length < READ_AHEAD_SMALL : null;
  // The model goes into the heap once, as the core's record of it (js/inside.js): a base with its
  // weights inside the .onnx as its skeleton, where they are external data of the model file
  // itself; from a URL, the body streams once, keeping the ranges generation reads.
  const { record, inside } = await readModel(core, model, { keep: readAhead ?? (() => true), force: options.keepExternalData === true });
  try {
    return await generate(core, model, record, inside, entries, keepExternal, readAhead, half, options);
  } finally {
    record.free();
  }
}

/** generateArtifacts on the model's record. */
async function generate(core, model, record, inside, entries, keepExternal, readAhead, half, options) {
  const m = core.m;
  const self = inside ? [{ path: inside.location, data: inside.data }] : [];
  const read = inside?.kept ? [{ path: inside.location, data: Object.assign(new Ranges(inside.what, inside.size), { ranges: inside.kept }) }] : self;
  const [external] = await externalReaders(core, [{ model, record }], [...entries.filter((e) => !self.some((s) => s.path === e.path)), ...read], 'generateArtifacts', { readAhead });
  return withGenerator(core, record, { context: 'generateArtifacts', external, keepExternal }, async (b) => {
    const { gen } = b;
    if ((options.loss === undefined || options.loss === null) && options.lossInputNames?.length)
      throw new WebtrainError('generateArtifacts: lossInputNames name the inputs of the loss, but loss is null (the model output is the loss)');
    const lists = [
      [NameList.REQUIRES_GRAD, options.requiresGrad],
      [NameList.FROZEN_PARAMS, options.frozenParams],
      [NameList.ADDITIONAL_OUTPUTS, options.additionalOutputNames],
      [NameList.LOSS_INPUTS, options.lossInputNames],
    ];
    for (const [kind, list] of lists) {
      for (const name of list ?? []) core.check(b.with([name], (pn) => m._wtw_gen_add_name(gen, kind, pn)));
    }
    if (options.lora !== undefined && options.lora !== null) setLora(core, b, options.lora);
    if (options.loss instanceof Block) {
      const inputs = options.lossInputNames?.length ? options.lossInputNames : b.outputs();
      const out = await withBuilder(b, () => options.loss(...inputs));
      const lossName = Array.isArray(out) ? out[0] : out;
      core.check(b.with([lossName], (pn) => m._wtw_gen_set_custom_loss(gen, pn)));
    } else {
      const l = lossOptions(options.loss);
      core.check(
        b.with([l.reduction ?? ''], (pr) => m._wtw_gen_set_loss(gen, l.type ?? Loss.NONE, pr, l.ignoreIndex !== undefined ? 1 : 0, l.ignoreIndex ?? 0)),
      );
      for (const [which, w] of [[LossWeights.WEIGHT, l.weight], [LossWeights.POS_WEIGHT, l.posWeight]]) {
        if (!w) continue;
        const f = Float32Array.from(w);
        core.check(core.withBytes(f, (pw) => m._wtw_gen_set_loss_weights(gen, which, pw, f.length)));
      }
    }
    const o = optimOptions(options.optimizer);
    const betas = o.betas ?? null;
    core.check(
      m._wtw_gen_set_optimizer(gen, o.type ?? Optim.NONE, betas ? 1 : 0, betas?.[0] ?? 0, betas?.[1] ?? 0, o.eps !== undefined ? 1 : 0, o.eps ?? 0,
        o.weightDecay !== undefined ? 1 : 0, o.weightDecay ?? 0, o.adamMode !== undefined ? 1 : 0, o.adamMode ?? 0,
        o.biasCorrection === false ? 1 : 0, o.clipGradNorm ?? 0),
    );
    if (o.lr !== undefined) {
      if (typeof o.lr !== 'number' || !(o.lr > 0)) throw new WebtrainError(`optimizer.lr: expected a number > 0; got ${o.lr}`);
      core.check(m._wtw_gen_set_lr(gen, o.lr));
    }
    core.check(m._wtw_gen_set_flags(gen, options.nominalCheckpoint ? 1 : 0, options.ortFormat ? 1 : 0, options.customOpLibrary ? 1 : 0));
    core.check(m._wtw_gen_set_frozen_dtype(gen, half ? DType.FLOAT16 : 0));
    // parameters held by reference are read now, into the checkpoint (with float16, every frozen weight)
    core.check(external.run(() => m._wtw_gen_run(gen)));
    // { trainingModel, evalModel, optimizerModel?, checkpoint, nominalCheckpoint? }: the
    // optimizer model and the nominal checkpoint only when generated.
    const result = {};
    for (const [key, which] of Object.entries(GenResult)) {
      const n = m._wtw_gen_result_size(gen, which);
      const optional = which === GenResult.OPTIMIZER_MODEL || which === GenResult.NOMINAL_CHECKPOINT;
      if (n || !optional) result[fieldName(key)] = n ? core.copyOut(m._wtw_gen_result_data(gen, which), n) : undefined;
    }
    // frozenDtype 'float16': the frozen float32 weights that stay float32, and why
    if (half) result.keptFloat32 = core.string(m._wtw_gen_frozen_kept(gen)).split('\n').filter(Boolean).map((line) => {
      const at = line.indexOf(': ');
      return { name: line.slice(0, at), reason: line.slice(at + 2) };
    });
    // (the generator wrote the base file's size and fingerprint into the models that refer to it)
    if (keepExternal) for (const k of ['trainingModel', 'evalModel']) rememberSource(result[k], model, [...entries, ...self]);
    if (options.artifactDirectory) await writeArtifacts(core, options.artifactDirectory, options.prefix ?? '', result);
    return result;
  });
}

/** frozenDtype: undefined or 'float32' (weights as they are) -> false, 'float16' -> true. */
function frozenDtypeOption(value) {
  if (value === undefined || value === null || value === 'float32') return false;
  if (value === 'float16') return true;
  throw new WebtrainError(`generateArtifacts: frozenDtype ${typeof value === 'string' ? `'${value}'` : String(value)}; expected 'float16' (frozen weights stored as float16) or 'float32' (as they are)`);
}

/** The file each artifact is written to (after the prefix), as ONNX Runtime names them. */
export const fileNames = Object.freeze({
  trainingModel: 'training_model.onnx',
  evalModel: 'eval_model.onnx',
  optimizerModel: 'optimizer_model.onnx',
  checkpoint: 'checkpoint',
  nominalCheckpoint: 'nominal_checkpoint',
});

async function writeArtifacts(core, dir, prefix, result) {
  const d = String(dir instanceof URL ? dir.pathname : dir);
  if (isNode && !/^[a-z]+:\/\//.test(d)) {
    const { mkdir } = await importNode('fs/promises');
    await mkdir(d, { recursive: true });
    const names = Object.keys(result).filter((k) => fileNames[k]).map((k) => `${prefix}${fileNames[k]}`);
    await placeSideFiles(core, d, [result.trainingModel, result.evalModel], names);
  }
  for (const [k, v] of Object.entries(result)) if (fileNames[k]) await writeBytes(`${d.replace(/\/$/, '')}/${prefix}${fileNames[k]}`, v);
}
