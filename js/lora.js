// LoRA options of artifacts.generateArtifacts: checked here, targets resolved to what the C core
// takes (src/artifacts/lora.c): parts of weight names when every target is a string, else
// whole names resolved over the model's MatMul/Gemm weights (RegExp and functions run in JS).
import { WebtrainError } from './core.js';
import { NameList } from './abi.js';
import { writeBytes } from './storage.js';
import { readBytes } from './bytes.js';
import { checkOptions } from './options.js';

/** generateArtifacts' lora option (js/artifacts.d.ts LoraOptions). */
const LORA_OPTIONS = ['rank', 'alpha', 'targets', 'seed'];

const fail = (msg) => {
  throw new WebtrainError(`generateArtifacts: lora.${msg}`);
};

const show = (t) => (t instanceof RegExp ? String(t) : typeof t === 'function' ? `function ${t.name || '(anonymous)'}` : JSON.stringify(t));

/** Checks options.lora -> { rank, alpha, seed, targets: [string | RegExp | function] }. */
export function loraOptions(lora) {
  if (typeof lora !== 'object' || Array.isArray(lora)) throw new WebtrainError(`generateArtifacts: lora: expected an object { rank, alpha, targets, seed? }; got ${show(lora)}`);
  checkOptions(lora, LORA_OPTIONS, "generateArtifacts' lora");
  const { rank, alpha = rank, seed = 0 } = lora;
  if (!Number.isInteger(rank) || rank < 1 || rank > 65536) fail(`rank: expected an integer from 1 to 65536 (8 or 16 are usual); got ${show(rank)}`);
  if (typeof alpha !== 'number' || !Number.isFinite(alpha) || !(alpha > 0)) fail(`alpha: expected a finite number > 0 (the adapters are scaled by alpha / rank); got ${show(alpha)}`);
  if (!Number.isSafeInteger(seed) || seed < 0) fail(`seed: expected an integer from 0 to 2^53 - 1; got ${show(seed)}`);
  const list = lora.targets instanceof RegExp || typeof lora.targets === 'string' || typeof lora.targets === 'function' ? [lora.targets] : lora.targets;
  if (!Array.isArray(list) || list.length === 0) fail(`targets: expected weight name parts, RegExps or (name) => boolean functions, e.g. ['q_proj', 'v_proj']; got ${show(lora.targets)}`);
  for (const [i, t] of list.entries()) {
    if (typeof t === 'string' ? t === '' : !(t instanceof RegExp) && typeof t !== 'function') fail(`targets[${i}]: expected a non-empty string, a RegExp or a function of a weight name; got ${show(t)}`);
  }
  return { rank, alpha, seed, targets: list };
}

/** Passes the checked options to the generator handle of `b` (js/builder.js). */
export function setLora(core, b, lora) {
  const m = core.m;
  const o = loraOptions(lora);
  let names = o.targets;
  let exact = 0;
  if (!o.targets.every((t) => typeof t === 'string')) {
    const all = core.takeBuf(m._wtw_gen_lora_weights(b.gen), 'generateArtifacts: lora.targets');
    const weights = new TextDecoder().decode(all).split('\0').filter(Boolean);
    const chosen = new Set();
    for (const [i, t] of o.targets.entries()) {
      const test = typeof t === 'string' ? (w) => w.includes(t) : t instanceof RegExp ? (w) => { t.lastIndex = 0; return t.test(w); } : t;
      let hits = 0;
      for (const w of weights) {
        let r;
        try {
          r = test(w);
        } catch (e) {
          fail(`targets[${i}] (${show(t)}) threw on weight '${w}': ${e?.message ?? e}`);
        }
        if (r) {
          chosen.add(w);
          hits++;
        }
      }
      if (!hits) fail(`targets[${i}] (${show(t)}) matches none of the model's ${weights.length} MatMul/Gemm weights${weights.length ? ` (such as '${weights.slice(0, 3).join("', '")}')` : ''}`);
    }
    names = [...chosen];
    exact = 1;
  }
  for (const name of names) core.check(b.with([name], (pn) => m._wtw_gen_add_name(b.gen, NameList.LORA_TARGETS, pn)));
  core.check(m._wtw_gen_set_lora(b.gen, o.rank, o.alpha, o.seed, exact));
}

function outputList(what, destination, outputNames) {
  if (Array.isArray(destination) && (outputNames === undefined || !Array.isArray(outputNames))) [destination, outputNames] = [null, destination];
  if (!Array.isArray(outputNames) || !outputNames.length || outputNames.some((n) => typeof n !== 'string'))
    throw new WebtrainError(`${what}: give the output names to keep, e.g. ["output"]`);
  return [destination, outputNames];
}

/**
 * Module.exportMergedModel: the inference model with each W + (alpha/rank)·B·A folded into W
 * (plain ONNX, no adapter left).
 */
export async function exportMergedModel(module, destination, outputNames) {
  [destination, outputNames] = outputList('exportMergedModel', destination, outputNames);
  const core = module.core;
  const bytes = core.takeBuf(core.withStrings([outputNames.join('\0')], (p) => core.m._wtw_module_export_lora(module.h, p, outputNames.length, 0)), 'exportMergedModel');
  if (destination) await writeBytes(destination, bytes);
  return bytes;
}

/**
 * Module.exportLoraAdapter: { model, adapter }: the base inference model taking every
 * `<W>.lora_A` / `<W>.lora_B` as an input (defaults: lora_B zero, the base model), and the
 * trained adapters in ONNX Runtime's adapter format (.onnx_adapter) for its LoraAdapter.
 */
export async function exportLoraAdapter(module, stateRaw, destination, outputNames, options = {}) {
  if (Array.isArray(destination) && outputNames && !Array.isArray(outputNames)) options = outputNames; // (outputNames, options)
  [destination, outputNames] = outputList('exportLoraAdapter', destination, outputNames);
  const core = module.core;
  const { adapterVersion = 0, modelVersion = 0 } = checkOptions(options, ['adapterVersion', 'modelVersion'], 'exportLoraAdapter') ?? {};
  for (const [k, v] of Object.entries({ adapterVersion, modelVersion }))
    if (!Number.isInteger(v) || v < 0 || v > 0x7fffffff) throw new WebtrainError(`exportLoraAdapter: ${k}: expected an integer from 0 to 2^31 - 1; got ${v}`);
  const model = core.takeBuf(core.withStrings([outputNames.join('\0')], (p) => core.m._wtw_module_export_lora(module.h, p, outputNames.length, 1)), 'exportLoraAdapter');
  const adapter = core.takeBuf(core.m._wtw_state_lora_adapter(stateRaw, adapterVersion, modelVersion), 'exportLoraAdapter');
  if (destination) {
    const d = String(destination instanceof URL ? destination.pathname : destination).replace(/\.onnx$/, '');
    await writeBytes(`${d}.onnx`, model);
    await writeBytes(`${d}.onnx_adapter`, adapter);
  }
  return { model, adapter };
}

/** CheckpointState.saveCheckpoint(..., { trainableOnly: true }): the trainable parameters alone. */
export async function saveTrainable(state, h, destination, includeOptimizerState) {
  const bytes = state.core.takeBuf(state.m._wtw_state_save_trainable(h, includeOptimizerState ? 1 : 0), 'saveCheckpoint (trainableOnly)');
  if (destination !== undefined && destination !== null) await writeBytes(destination, bytes);
  return bytes;
}

/** CheckpointState.loadParameters: a (trainable-only) checkpoint's parameters into the state. */
export async function loadParameters(state, h, source) {
  const bytes = await readBytes(source);
  state.core.check(state.core.withBytes(bytes, (p, n) => state.m._wtw_state_load_params(h, p, n)), 'loadParameters');
}
