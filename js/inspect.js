// inspect(source): what a model or a checkpoint declares, without planning or training it (the
// CLI's `inspect`, and tools). A model is read as generateArtifacts reads it (js/inside.js: the
// core's record of it, a weights-inside file scanned past its weights): inputs and outputs from
// the record, ops, initializers and opsets from the core's parse of the same bytes (tensors in
// side files read, so that a side file that does not hold them is an error naming the tensor). A
// checkpoint (recognised by its content, whatever its name) is loaded.
import { coreFor, WebtrainError } from './core.js';
import { DType, OpSupport } from './abi.js';
import { openSource, wholeOf } from './source.js';
import { readModel } from './inside.js';
import { externalDataOption, externalReaders } from './external.js';
import { CheckpointState } from './training.js';
import { checkOptions, MODEL_OPTIONS } from './options.js';

const DTYPES = { [DType.FLOAT]: 'float32', 2: 'uint8', 3: 'int8', 5: 'int16', [DType.INT32]: 'int32', [DType.INT64]: 'int64', [DType.BOOL]: 'bool', [DType.FLOAT16]: 'float16', 11: 'float64', 16: 'bfloat16' };
const SUPPORT = { [OpSupport.NONE]: 'not supported', [OpSupport.FORWARD]: 'forward only', [OpSupport.GRADIENT]: 'forward + gradient' };

/**
 * inspect(source, { externalData }) -> a model's { kind: 'model', producer, irVersion, opsets,
 * inputs, outputs, ops, initializers, parameterElements } or a checkpoint's { kind: 'checkpoint',
 * parameters, trainableElements, frozenElements, properties, optimizerState }. A source that is
 * neither is a WebtrainError saying what the parser found.
 */
export async function inspect(source, options = {}) {
  checkOptions(options, MODEL_OPTIONS, 'inspect');
  const core = await coreFor(options);
  const entries = externalDataOption(options.externalData, 'inspect');
  // a checkpoint starts with its flatbuffer's root offset, then 'ODTC'
  const src = await openSource(source);
  let head;
  if (src.read) {
    head = new Uint8Array(Math.min(8, src.size));
    await src.read(0, head);
    await src.close();
  } else {
    source = await wholeOf(src); // a stream is read once
    head = source.subarray(0, 8);
  }
  if (head.length === 8 && String.fromCharCode(...head.subarray(4, 8)) === 'ODTC') return checkpointInfo(source, options);
  return modelInfo(core, source, entries, src.what);
}

async function modelInfo(core, source, entries, what) {
  const m = core.m;
  const { record } = await readModel(core, source, { check: false });
  try {
    // a model saved with external data: its side files beside it (read as any model's are)
    const [ext] = await externalReaders(core, [{ model: source, record }], entries, 'inspect');
    const h = ext.run(() => m._wtw_model_info_read(record.p, record.n));
    if (!h) throw new WebtrainError(`${what} is neither a webtrain checkpoint nor an ONNX model webtrain can read: ${core.lastError()}`);
    try {
      const io = (which) => record.io(which).map((v) => ({
        name: v.name,
        dtype: v.dtype ? `${v.sequence ? 'seq(' : ''}${DTYPES[v.dtype] ?? `type ${v.dtype}`}${v.sequence ? ')' : ''}` : null,
        shape: v.dims && v.dims.map((d) => d ?? '?'),
      }));
      const ops = Array.from({ length: m._wtw_model_info_op_count(h) }, (_, k) => ({
        op: core.string(m._wtw_model_info_op_type(h, k)),
        domain: core.string(m._wtw_model_info_op_domain(h, k)) || 'ai.onnx',
        nodes: m._wtw_model_info_op_nodes(h, k),
        webtrain: SUPPORT[m._wtw_model_info_op_support(h, k)],
      }));
      const initializers = Array.from({ length: m._wtw_model_info_initializer_count(h) }, (_, i) => {
        const shape = Array.from({ length: m._wtw_model_info_initializer_rank(h, i) }, (_, a) => m._wtw_model_info_initializer_dim(h, i, a));
        return { name: core.string(m._wtw_model_info_initializer_name(h, i)), dtype: DTYPES[m._wtw_model_info_initializer_dtype(h, i)] ?? null, shape, elements: shape.reduce((a, b) => a * b, 1) };
      });
      const opsets = Object.fromEntries(
        Array.from({ length: m._wtw_model_info_opset_count(h) }, (_, i) => [core.string(m._wtw_model_info_opset_domain(h, i)) || 'ai.onnx', m._wtw_model_info_opset_version(h, i)]),
      );
      return {
        kind: 'model',
        producer: core.string(m._wtw_model_info_producer(h)),
        irVersion: m._wtw_model_info_ir_version(h),
        opsets,
        inputs: io('inputs'),
        outputs: io('outputs'),
        ops,
        initializers,
        parameterElements: initializers.reduce((a, t) => a + t.elements, 0),
      };
    } finally {
      m._wtw_model_info_free(h);
    }
  } finally {
    record.free();
  }
}

async function checkpointInfo(source, options) {
  const state = await CheckpointState.loadCheckpoint(source, options.externalData ? { externalData: options.externalData } : undefined);
  try {
    const parameters = [];
    for (const p of state.parameters.values()) {
      parameters.push({ name: p.name, shape: p.dims, elements: p.data ? p.data.length : p.dims.reduce((a, b) => a * b, 1), trainable: p.requiresGrad });
    }
    const m = state.m;
    const optimizerState = m._wtw_state_has_optimizer_state(state.h)
      ? { step: m._wtw_state_optimizer_step(state.h), initialLearningRate: m._wtw_state_optimizer_initial_lr(state.h), momentsPerParameter: m._wtw_state_optimizer_moment_count(state.h) }
      : null;
    return {
      kind: 'checkpoint',
      parameters,
      trainableElements: parameters.filter((p) => p.trainable).reduce((a, p) => a + p.elements, 0),
      frozenElements: parameters.filter((p) => !p.trainable).reduce((a, p) => a + p.elements, 0),
      properties: Object.fromEntries(state.properties.entries()),
      optimizerState,
    };
  } finally {
    state.release();
  }
}
