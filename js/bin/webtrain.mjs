#!/usr/bin/env node
// webtrain's command-line tool: generate training artifacts, inspect models and checkpoints,
// export inference models. Usage errors exit 2, runtime errors exit 1 (stack trace with
// WEBTRAIN_DEBUG=1).
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError, parseArgs, formatBytes, formatCount, Progress } from './args.mjs';
import { LossType, OptimType } from '../abi.js';

const LOSSES = [...Object.keys(LossType), 'none'];
const OPTIMIZERS = [...Object.keys(OptimType), 'none'];

const HELP = `Usage: webtrain COMMAND [options]

Train ONNX models in WebAssembly: artifacts, checkpoints and inference models.

Commands:
  generate-artifacts MODEL.onnx -o DIR   training, eval and optimizer models and the checkpoint
  inspect FILE                           what an ONNX model or a checkpoint holds
  export-inference --artifacts DIR ...   an inference model with the trained parameters

Options:
  -h, --help      show help (also: webtrain COMMAND --help)
  -V, --version   show the version

Environment:
  WEBTRAIN_DEBUG=1   print stack traces of errors
`;

const COMMANDS = {
  'generate-artifacts': {
    usage: `Usage: webtrain generate-artifacts MODEL.onnx -o DIR [options]

Writes {prefix}training_model.onnx, eval_model.onnx, optimizer_model.onnx and checkpoint
into DIR, as ONNX Runtime's generate_artifacts does.

Options:
  -o, --output DIR              directory to write the artifacts to (created if missing)
      --requires-grad a,b,...   parameters to train (default: every float initializer)
      --frozen a,b,...          parameters to keep fixed
      --frozen-dtype float16    store frozen float32 weights as float16 (half the memory;
                                read as float by MatMul, Gemm, Gather and Conv); default float32
      --loss NAME               ${LOSSES.join(' | ')} (default: none:
                                the model's first output is the loss)
      --optimizer NAME          AdamW | SGD | none (default: none: no optimizer model)
      --additional-outputs a,b  model outputs the training and eval models also return
      --loss-inputs a,b         model outputs the loss reads (default: the first output)
      --prefix P                prefix of the file names
      --nominal-checkpoint      also write a nominal checkpoint (shapes, no values)
      --lora-rank N             LoRA: adapters of rank N on the --lora-targets weights
                                (trained; the base weights stay frozen)
      --lora-targets a,b,...    LoRA: parts of weight names (e.g. q_proj,v_proj), or
                                /regexp/ over the MatMul/Gemm weight names
      --lora-alpha A            LoRA: the adapters are scaled by A / N (default N)
      --lora-seed S             LoRA: seed of the adapters' initial values (default 0)
  -q, --quiet                   no progress on stderr
  -h, --help                    show this help
`,
    spec: {
      output: { type: 'string', short: 'o' },
      'requires-grad': { type: 'list' },
      frozen: { type: 'list' },
      'frozen-dtype': { type: 'string', choices: ['float16', 'float32'] },
      loss: { type: 'string', choices: LOSSES },
      optimizer: { type: 'string', choices: OPTIMIZERS },
      'additional-outputs': { type: 'list' },
      'loss-inputs': { type: 'list' },
      prefix: { type: 'string' },
      'nominal-checkpoint': { type: 'flag' },
      'lora-rank': { type: 'string' },
      'lora-targets': { type: 'list' },
      'lora-alpha': { type: 'string' },
      'lora-seed': { type: 'string' },
      quiet: { type: 'flag', short: 'q' },
      help: { type: 'flag', short: 'h' },
    },
    positionals: ['MODEL.onnx'],
    run: generateArtifactsCommand,
  },
  inspect: {
    usage: `Usage: webtrain inspect FILE [--json]

Shows what an ONNX model (inputs, outputs, ...) or a checkpoint (parameters, properties, ...)
holds. The kind is detected from the content. Facts the core does not expose yet are shown
as "not available".

Options:
      --json        print one JSON object instead of text
  -h, --help        show this help
`,
    spec: { json: { type: 'flag' }, help: { type: 'flag', short: 'h' } },
    positionals: ['FILE'],
    run: inspectCommand,
  },
  'export-inference': {
    usage: `Usage: webtrain export-inference --artifacts DIR --outputs a,b -o FILE [options]

Loads the checkpoint into the eval model of DIR and writes a plain ONNX inference model
that keeps the given outputs.

Options:
      --artifacts DIR       directory made by generate-artifacts
      --prefix P            prefix of the artifact file names
      --checkpoint FILE     checkpoint with the trained parameters
                            (default: DIR/{prefix}checkpoint)
      --outputs a,b,...     model outputs to keep
  -o, --output FILE         where to write the inference model
      --lora MODE           LoRA artifacts: merged (the adapters folded into the base
                            weights) or adapter (FILE: the base model taking the
                            adapters as inputs; FILE's .onnx_adapter beside it: the
                            adapters, ONNX Runtime's format)
  -q, --quiet               no progress on stderr
  -h, --help                show this help
`,
    spec: {
      artifacts: { type: 'string' },
      prefix: { type: 'string' },
      checkpoint: { type: 'string' },
      outputs: { type: 'list' },
      output: { type: 'string', short: 'o' },
      lora: { type: 'string', choices: ['merged', 'adapter'] },
      quiet: { type: 'flag', short: 'q' },
      help: { type: 'flag', short: 'h' },
    },
    positionals: [],
    run: exportInferenceCommand,
  },
};

async function main(argv) {
  const [first, ...rest] = argv;
  if (first === undefined) {
    process.stderr.write(HELP);
    return 2;
  }
  if (first === '-h' || first === '--help' || first === 'help') {
    if (first === 'help' && rest[0] && COMMANDS[rest[0]]) process.stdout.write(COMMANDS[rest[0]].usage);
    else process.stdout.write(HELP);
    return 0;
  }
  if (first === '-V' || first === '--version') {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    process.stdout.write(`webtrain ${pkg.version}\n`);
    return 0;
  }
  if (first.startsWith('-')) throw new UsageError(`unknown option '${first}' (options come after the command)`);
  const cmd = COMMANDS[first];
  if (!cmd) throw new UsageError(`unknown command '${first}'; commands: ${Object.keys(COMMANDS).join(', ')}`);
  const { options, positionals } = parseArgs(rest, cmd.spec, first);
  if (options.help) {
    process.stdout.write(cmd.usage);
    return 0;
  }
  if (positionals.length < cmd.positionals.length) throw new UsageError(`missing argument ${cmd.positionals[positionals.length]}`, first);
  if (positionals.length > cmd.positionals.length) throw new UsageError(`unexpected argument '${positionals[cmd.positionals.length]}'`, first);
  return (await cmd.run(options, positionals)) ?? 0;
}

/** The package's API, loaded only once a command actually runs (keeps --help instant). */
async function api() {
  return import('../index.js');
}

// ---- generate-artifacts ------------------------------------------------------------------------

async function generateArtifactsCommand(o, [model]) {
  if (!o.output) throw new UsageError('missing option -o DIR (where to write the artifacts)', 'generate-artifacts');
  const { artifacts } = await api();
  const progress = new Progress({ quiet: o.quiet });
  const prefix = o.prefix ?? '';
  const result = await progress.step(`generating artifacts from ${model}`, () =>
    artifacts.generateArtifacts(model, {
      requiresGrad: o.requiresGrad,
      frozenParams: o.frozen,
      frozenDtype: o.frozenDtype,
      loss: o.loss === undefined || o.loss === 'none' ? undefined : o.loss,
      optimizer: o.optimizer === undefined || o.optimizer === 'none' ? undefined : o.optimizer,
      additionalOutputNames: o.additionalOutputs,
      lossInputNames: o.lossInputs,
      nominalCheckpoint: Boolean(o.nominalCheckpoint),
      lora: loraOption(o),
      artifactDirectory: o.output,
      prefix,
    }),
  );
  const rows = Object.entries(artifacts.fileNames).filter(([k]) => result[k]).map(([k, f]) => [join(o.output, `${prefix}${f}`), formatBytes(result[k].byteLength)]);
  const width = Math.max(...rows.map((r) => r[0].length));
  process.stdout.write(`wrote ${rows.length} files:\n`);
  for (const [path, size] of rows) process.stdout.write(`  ${path.padEnd(width)}  ${size.padStart(9)}\n`);
  if (result.keptFloat32?.length) {
    process.stdout.write(`kept float32 (${result.keptFloat32.length} frozen weight${result.keptFloat32.length === 1 ? '' : 's'}):\n`);
    for (const { name, reason } of result.keptFloat32) process.stdout.write(`  ${name}: ${reason}\n`);
  }
  return 0;
}

/** --lora-* -> the lora option (undefined without them); numbers checked here, the rest by the API. */
function loraOption(o) {
  const c = 'generate-artifacts';
  const given = ['loraRank', 'loraTargets', 'loraAlpha', 'loraSeed'].filter((k) => o[k] !== undefined);
  if (!given.length) return undefined;
  if (o.loraRank === undefined) throw new UsageError('missing option --lora-rank N (the adapters\' rank, e.g. 8)', c);
  if (o.loraTargets === undefined) throw new UsageError('missing option --lora-targets NAMES (the weights to adapt, e.g. q_proj,v_proj)', c);
  const num = (name, v, integer) => {
    const x = Number(v);
    if (v.trim() === '' || !Number.isFinite(x) || (integer && !Number.isInteger(x))) throw new UsageError(`option '--${name}': expected ${integer ? 'an integer' : 'a number'}; got '${v}'`, c);
    return x;
  };
  const targets = o.loraTargets.map((t) => {
    const m = /^\/(.+)\/([a-z]*)$/.exec(t);
    if (!m) return t;
    try {
      return new RegExp(m[1], m[2]);
    } catch (err) {
      throw new UsageError(`option '--lora-targets': '${t}' is not a valid regular expression: ${err.message}`, c);
    }
  });
  return {
    rank: num('lora-rank', o.loraRank, true),
    targets,
    ...(o.loraAlpha !== undefined ? { alpha: num('lora-alpha', o.loraAlpha, false) } : {}),
    ...(o.loraSeed !== undefined ? { seed: num('lora-seed', o.loraSeed, true) } : {}),
  };
}

// ---- inspect -----------------------------------------------------------------------------------

async function inspectCommand(o, [file]) {
  const s = await stat(file).catch((err) => {
    throw new Error(`cannot read '${file}': ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  });
  if (s.isDirectory()) throw new Error(`'${file}' is a directory; give a model (.onnx) or a checkpoint file`);
  const { inspect } = await api();
  const info = { ...(await inspect(file)), file, bytes: s.size };
  process.stdout.write(o.json ? `${JSON.stringify(info, null, 2)}\n` : info.kind === 'checkpoint' ? checkpointText(info) : modelText(info));
  return 0;
}

function table(rows, indent = '  ') {
  if (!rows.length) return '';
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  return rows.map((r) => indent + r.map((v, c) => (c === r.length - 1 ? String(v) : String(v).padEnd(widths[c]))).join('  ').trimEnd()).join('\n') + '\n';
}

const shapeText = (s) => (s ? `[${s.join(', ')}]` : '?');

function modelText(info) {
  let out = `ONNX model ${info.file} (${formatBytes(info.bytes)}; IR ${info.irVersion}${info.producer ? `, from ${info.producer}` : ''})\n`;
  out += `opsets: ${Object.entries(info.opsets).map(([d, v]) => `${d} ${v}`).join(', ')}\n`;
  out += `\ninputs (${info.inputs.length}):\n`;
  out += table(info.inputs.map((i) => [i.name, i.dtype ?? '?', shapeText(i.shape)]));
  out += `\noutputs (${info.outputs.length}):\n`;
  out += table(info.outputs.map((o) => [o.name, o.dtype ?? '?', shapeText(o.shape)]));
  out += `\nops (${info.ops.length} types, ${info.ops.reduce((a, o) => a + o.nodes, 0)} nodes):\n`;
  out += table(info.ops.map((o) => [o.op, o.domain, `${o.nodes} node${o.nodes === 1 ? '' : 's'}`, o.webtrain]));
  out += `\ninitializers (${info.initializers.length}, ${formatCount(info.parameterElements)} values):\n`;
  out += info.initializers.length ? table(info.initializers.map((t) => [t.name, t.dtype ?? '?', shapeText(t.shape)])) : '  (none)\n';
  return out;
}

function checkpointText(info) {
  const trainable = info.parameters.filter((p) => p.trainable).length;
  let out = `checkpoint ${info.file} (${formatBytes(info.bytes)})\n`;
  out += `\nparameters (${info.parameters.length}: ${trainable} trainable, ${info.parameters.length - trainable} frozen; `;
  out += `${formatCount(info.trainableElements)} trainable and ${formatCount(info.frozenElements)} frozen values):\n`;
  out += table(info.parameters.map((p) => [p.name, shapeText(p.shape), formatCount(p.elements), p.trainable ? 'trainable' : 'frozen']));
  const props = Object.entries(info.properties);
  out += `\nproperties (${props.length}):\n`;
  out += props.length ? table(props.map(([k, v]) => [k, typeof v === 'string' ? JSON.stringify(v) : v])) : '  (none)\n';
  const o = info.optimizerState;
  out += o ? `\noptimizer state: step ${o.step}, initial learning rate ${o.initialLearningRate}, ${o.momentsPerParameter} moment${o.momentsPerParameter === 1 ? '' : 's'} per trainable parameter\n` : '\noptimizer state: none\n';
  return out;
}

// ---- export-inference --------------------------------------------------------------------------

async function exportInferenceCommand(o) {
  const c = 'export-inference';
  if (!o.artifacts) throw new UsageError('missing option --artifacts DIR (the directory made by generate-artifacts)', c);
  if (!o.outputs) throw new UsageError('missing option --outputs NAMES (the model outputs to keep, e.g. --outputs output)', c);
  if (!o.output) throw new UsageError('missing option -o FILE (where to write the inference model)', c);
  const prefix = o.prefix ?? '';
  const checkpoint = o.checkpoint ?? join(o.artifacts, `${prefix}checkpoint`);
  const trainingModel = join(o.artifacts, `${prefix}training_model.onnx`);
  const evalModel = join(o.artifacts, `${prefix}eval_model.onnx`);
  const dir = await stat(o.artifacts).catch(() => null);
  if (!dir?.isDirectory()) throw new Error(`'${o.artifacts}' is not a directory (give the directory made by generate-artifacts)`);
  for (const f of [trainingModel, evalModel, checkpoint]) {
    await stat(f).catch(() => {
      throw new Error(`cannot read '${f}': no such file${f === checkpoint ? '' : ` (is '${o.artifacts}' a directory made by generate-artifacts${prefix ? ` with --prefix ${prefix}` : ''}?)`}`);
    });
  }
  const { CheckpointState, Module } = await api();
  const progress = new Progress({ quiet: o.quiet });
  const state = await progress.step(`loading ${checkpoint}`, () => CheckpointState.loadCheckpoint(checkpoint));
  let module;
  try {
    module = await progress.step(`loading the models of ${o.artifacts}`, () => Module.create(trainingModel, state, evalModel));
    if (o.lora === 'adapter') {
      const base = o.output.replace(/\.onnx$/, '');
      const { model, adapter } = await progress.step(`exporting to ${base}.onnx and ${base}.onnx_adapter`, () => module.exportLoraAdapter(base, o.outputs));
      process.stdout.write(`wrote ${base}.onnx (${formatBytes(model.byteLength)}; outputs: ${o.outputs.join(', ')}) and ${base}.onnx_adapter (${formatBytes(adapter.byteLength)})\n`);
      return 0;
    }
    const bytes = await progress.step(`exporting to ${o.output}`, () =>
      o.lora === 'merged' ? module.exportMergedModel(o.output, o.outputs) : module.exportModelForInferencing(o.output, o.outputs));
    process.stdout.write(`wrote ${o.output} (${formatBytes(bytes.byteLength)}; outputs: ${o.outputs.join(', ')})\n`);
  } finally {
    module?.release();
    state.release();
  }
  return 0;
}

// ---- entry -------------------------------------------------------------------------------------

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(`webtrain: ${err.message}\n`);
    process.stderr.write(err.command ? `Run 'webtrain ${err.command} --help' for usage.\n` : `Run 'webtrain --help' for usage.\n`);
    process.exitCode = 2;
  } else {
    const debug = process.env.WEBTRAIN_DEBUG === '1';
    process.stderr.write(`webtrain: error: ${debug ? (err?.stack ?? err) : (err?.message ?? err)}\n`);
    process.exitCode = 1;
  }
}
