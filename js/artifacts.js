// artifacts.generateArtifacts: from a forward-only ONNX model to the training, eval and
// optimizer models and the checkpoint, in the C core (ONNX Runtime's generate_artifacts).
import { init, WebtrainError } from './core.js';
import { readBytes } from './bytes.js';
import { writeBytes } from './storage.js';
import { importNode } from './node-builtin.js';
import { Block, withBuilder, OnnxblockModel } from './onnxblock.js';
import { Builder } from './builder.js';

export const LossType = Object.freeze({ MSELoss: 1, CrossEntropyLoss: 2, BCEWithLogitsLoss: 3, L1Loss: 4 });
export const OptimType = Object.freeze({ AdamW: 1, SGD: 2 });


function lossOptions(loss) {
  if (loss === undefined || loss === null) return { type: 0 };
  if (typeof loss === 'number') return { type: loss };
  if (typeof loss === 'string') {
    if (!(loss in LossType)) throw new WebtrainError(`unknown loss '${loss}'; expected one of ${Object.keys(LossType).join(', ')} or an onnxblock.Block`);
    return { type: LossType[loss] };
  }
  if (typeof loss === 'object') return { ...loss, type: typeof loss.type === 'string' ? LossType[loss.type] : loss.type };
  throw new WebtrainError('loss: expected an artifacts.LossType, an options object or an onnxblock.Block');
}

function optimOptions(opt) {
  if (opt === undefined || opt === null) return { type: 0 };
  if (typeof opt === 'number') return { type: opt };
  if (typeof opt === 'string') {
    if (!(opt in OptimType)) throw new WebtrainError(`unknown optimizer '${opt}'; expected AdamW or SGD`);
    return { type: OptimType[opt] };
  }
  return { ...opt, type: typeof opt.type === 'string' ? OptimType[opt.type] : opt.type };
}

/**
 * generateArtifacts(model, options) -> { trainingModel, evalModel, optimizerModel, checkpoint,
 * nominalCheckpoint? } (Uint8Arrays); with `artifactDirectory` the files are also written
 * there, named `${prefix}training_model.onnx` ... as ONNX Runtime names them.
 */
export async function generateArtifacts(model, options = {}) {
  const core = await init(options);
  const m = core.m;
  const bytes = model instanceof OnnxblockModel ? model.bytes : await readBytes(model);
  const gen = core.handle(m._wtw_gen_new(), 'generateArtifacts');
  const b = new Builder(core, gen);
  try {
    const p = core.copyIn(bytes);
    try {
      core.check(m._wtw_gen_load(gen, p, bytes.byteLength));
    } finally {
      core.free(p);
    }
    if ((options.loss === undefined || options.loss === null) && options.lossInputNames?.length)
      throw new WebtrainError('generateArtifacts: lossInputNames name the inputs of the loss, but loss is null (the model output is the loss)');
    const lists = [options.requiresGrad, options.frozenParams, options.additionalOutputNames, options.lossInputNames];
    lists.forEach((list, kind) => {
      for (const name of list ?? []) core.check(b.with([name], (pn) => m._wtw_gen_add_name(gen, kind, pn)));
    });
    if (options.loss instanceof Block) {
      const inputs = options.lossInputNames?.length ? options.lossInputNames : b.outputs();
      const out = await withBuilder(b, () => options.loss(...inputs));
      const lossName = Array.isArray(out) ? out[0] : out;
      core.check(b.with([lossName], (pn) => m._wtw_gen_set_custom_loss(gen, pn)));
    } else {
      const l = lossOptions(options.loss);
      core.check(
        b.with([l.reduction ?? ''], (pr) => m._wtw_gen_set_loss(gen, l.type ?? 0, pr, l.ignoreIndex !== undefined ? 1 : 0, l.ignoreIndex ?? 0)),
      );
      for (const [which, w] of [[0, l.weight], [1, l.posWeight]]) {
        if (!w) continue;
        const f = Float32Array.from(w);
        const pw = core.copyIn(new Uint8Array(f.buffer));
        try {
          core.check(m._wtw_gen_set_loss_weights(gen, which, pw, f.length));
        } finally {
          core.free(pw);
        }
      }
    }
    const o = optimOptions(options.optimizer);
    const betas = o.betas ?? null;
    core.check(
      m._wtw_gen_set_optimizer(gen, o.type ?? 0, betas ? 1 : 0, betas?.[0] ?? 0, betas?.[1] ?? 0, o.eps !== undefined ? 1 : 0, o.eps ?? 0,
        o.weightDecay !== undefined ? 1 : 0, o.weightDecay ?? 0, o.adamMode !== undefined ? 1 : 0, o.adamMode ?? 0,
        o.biasCorrection === false ? 1 : 0, o.clipGradNorm ?? 0),
    );
    if (o.lr !== undefined) {
      if (typeof o.lr !== 'number' || !(o.lr > 0)) throw new WebtrainError(`optimizer.lr: expected a number > 0; got ${o.lr}`);
      core.check(m._wtw_gen_set_lr(gen, o.lr));
    }
    core.check(m._wtw_gen_set_flags(gen, options.nominalCheckpoint ? 1 : 0, options.ortFormat ? 1 : 0, options.customOpLibrary ? 1 : 0));
    core.check(m._wtw_gen_run(gen));
    const take = (which) => {
      const n = m._wtw_gen_result_size(gen, which);
      if (!n) return undefined;
      const ptr = m._wtw_gen_result_data(gen, which);
      return core.heap.slice(ptr, ptr + n);
    };
    const result = {
      trainingModel: take(0),
      evalModel: take(1),
      optimizerModel: take(2),
      checkpoint: take(3),
    };
    const nominal = take(4);
    if (nominal) result.nominalCheckpoint = nominal;
    if (!result.optimizerModel) delete result.optimizerModel;
    if (options.artifactDirectory) await writeArtifacts(options.artifactDirectory, options.prefix ?? '', result);
    return result;
  } finally {
    m._wtw_gen_free(gen);
  }
}

const FILES = {
  trainingModel: 'training_model.onnx',
  evalModel: 'eval_model.onnx',
  optimizerModel: 'optimizer_model.onnx',
  checkpoint: 'checkpoint',
  nominalCheckpoint: 'nominal_checkpoint',
};

async function writeArtifacts(dir, prefix, result) {
  const d = String(dir instanceof URL ? dir.pathname : dir);
  if (typeof process !== 'undefined' && process.versions?.node && !/^[a-z]+:\/\//.test(d)) {
    const { mkdir } = await importNode('fs/promises');
    await mkdir(d, { recursive: true });
  }
  for (const [k, v] of Object.entries(result)) await writeBytes(`${d.replace(/\/$/, '')}/${prefix}${FILES[k]}`, v);
}
