// onnxblock: compose custom losses from blocks, as ONNX Runtime's Python onnxblock does.
// A Block is callable like in Python (`this._add(a, b)`): calling it inside a build adds its
// nodes to the model being prepared and returns the name of its output.
//
//   class WeightedAverageLoss extends onnxblock.Block {
//     constructor() { super(); this._loss1 = new onnxblock.loss.MSELoss(); ... }
//     build(name1, name2) { return this._add(this._mul(this._w1(), this._loss1(name1, 'target1')), ...); }
//   }
import { WebtrainError } from './core.js';
import { Loss } from './abi.js';
import { OnnxblockModel } from './built-model.js';
import { checkOptions } from './options.js';

/** The options of the reduction blocks (ReduceMean, ReduceSum). */
const REDUCE_OPTIONS = ['axes', 'keepdims'];
/** The options of the loss blocks: ONNX Runtime's Python (snake_case) names too. */
const LOSS_BLOCK_OPTIONS = ['reduction', 'weight', 'ignoreIndex', 'ignore_index', 'posWeight', 'pos_weight'];

let active = null; // the builder of the generateArtifacts call in progress

/** @internal used by artifacts.generateArtifacts */
export async function withBuilder(builder, fn) {
  if (active) throw new WebtrainError('onnxblock: a build is already in progress');
  active = builder;
  try {
    return await fn();
  } finally {
    active = null;
  }
}

function builder() {
  if (!active) throw new WebtrainError('onnxblock: blocks add nodes only while artifacts.generateArtifacts builds the loss');
  return active;
}

export class Block {
  constructor() {
    const self = (...args) => self.call(...args);
    Object.setPrototypeOf(self, new.target.prototype);
    return self;
  }

  /** Adds this block's nodes; returns its output name(s). Subclasses implement build(). */
  call(...args) {
    return this.build(...args);
  }

  build() {
    throw new WebtrainError(`${this.constructor.name}.build() is not implemented`);
  }
}

/** One ONNX node: `new Op('Add')(a, b)`; attributes as an object. */
class Op extends Block {
  constructor(opType, attrs = {}, domain = '') {
    super();
    this.opType = opType;
    this.attrs = attrs;
    this.domain = domain;
  }

  build(...inputs) {
    return builder().node(this.opType, inputs, this.attrs, this.domain);
  }
}

const op = (type) =>
  class extends Op {
    constructor(attrs = {}) {
      super(type, attrs);
    }
  };

export const blocks = {
  Add: op('Add'),
  Sub: op('Sub'),
  Mul: op('Mul'),
  Div: op('Div'),
  Abs: op('Abs'),
  Neg: op('Neg'),
  Exp: op('Exp'),
  Log: op('Log'),
  Sqrt: op('Sqrt'),
  Relu: op('Relu'),
  Sigmoid: op('Sigmoid'),
  Tanh: op('Tanh'),
  Softplus: op('Softplus'),
  Sum: op('Sum'),
  /** Pow(x) raises to a fixed exponent (default 2), or Pow(x, e) to a tensor exponent. */
  Pow: class extends Block {
    constructor(exponent = 2) {
      super();
      this.exponent = exponent;
    }
    build(x, e) {
      return builder().node('Pow', [x, e ?? builder().constant(this.exponent)]);
    }
  },
  /** A float constant (scalar or flat array): `new Constant(0.4)()` returns its name. */
  Constant: class extends Block {
    constructor(value) {
      super();
      this.value = value;
    }
    build() {
      return builder().constant(this.value);
    }
  },
  ReduceMean: class extends Block {
    constructor(options = {}) {
      super();
      const { axes, keepdims = false } = checkOptions(options, REDUCE_OPTIONS, `onnxblock.blocks.${new.target.name}`) ?? {};
      this.axes = axes;
      this.keepdims = keepdims;
    }
    build(x) {
      return builder().reduce('ReduceMean', x, this.axes, this.keepdims);
    }
  },
  ReduceSum: class extends Block {
    constructor(options = {}) {
      super();
      const { axes, keepdims = false } = checkOptions(options, REDUCE_OPTIONS, `onnxblock.blocks.${new.target.name}`) ?? {};
      this.axes = axes;
      this.keepdims = keepdims;
    }
    build(x) {
      return builder().reduce('ReduceSum', x, this.axes, this.keepdims);
    }
  },
};

/** Loss options as a reduction string ('mean') or an object; Python's snake_case names accepted. */
function lossOpts(arg) {
  if (arg === undefined || arg === null) return {};
  if (typeof arg === 'string') return { reduction: arg };
  checkOptions(arg, LOSS_BLOCK_OPTIONS, 'an onnxblock loss');
  return { ...arg, ignoreIndex: arg.ignoreIndex ?? arg.ignore_index, posWeight: arg.posWeight ?? arg.pos_weight };
}

function targetName(arg, dflt) {
  if (typeof arg === 'string') return arg;
  return arg?.targetName ?? arg?.target_name ?? dflt;
}

// The loss blocks build exactly the graphs of the built-in losses (the core's own loss code).
// Types are enum wt_loss_type's (js/abi.js Loss).
class LossBlock extends Block {
  constructor(type, defaultTarget, options) {
    super();
    const { reduction = 'mean', weight, ignoreIndex, posWeight } = lossOpts(options);
    if (!['mean', 'sum', 'none'].includes(reduction)) throw new WebtrainError(`loss reduction '${reduction}': expected mean, sum or none`);
    this.type = type;
    this.defaultTarget = defaultTarget;
    this.reduction = reduction;
    this.weight = weight;
    this.ignoreIndex = ignoreIndex;
    this.posWeight = posWeight;
  }

  build(input, target) {
    return builder().lossBlock(this.type, input, targetName(target, this.defaultTarget), this);
  }
}

export const loss = {
  MSELoss: class extends LossBlock {
    constructor(options) {
      super(Loss.MSE, 'target', options);
    }
  },
  L1Loss: class extends LossBlock {
    constructor(options) {
      super(Loss.L1, 'target', options);
    }
  },
  CrossEntropyLoss: class extends LossBlock {
    constructor(options) {
      super(Loss.CE, 'labels', options);
    }
  },
  /** The numerically stable form: max(x,0) - x*t + log(1 + exp(-|x|)). */
  BCEWithLogitsLoss: class extends LossBlock {
    constructor(options) {
      super(Loss.BCE, 'target', options);
    }
  },
};

// ---- forward models built with blocks ------------------------------------------------------

/** A model built by `buildModel`: its ONNX bytes and its input/output names. */
export { OnnxblockModel };

/**
 * Builds a forward model by stacking blocks on a base model, as ONNX Runtime's ForwardBlock
 * does: `block(...baseOutputNames)` adds nodes and returns the name(s) of the new outputs. The
 * result can go wherever a model is accepted (generateArtifacts, InferenceSession via `.bytes`).
 *   const model = await onnxblock.buildModel('base.onnx', new MyHead());
 */
export async function buildModel(base, block, options = {}) {
  const [{ coreFor }, { readBytes }, { withGenerator }, { externalDataOption, externalReaders }, { checkOptions, MODEL_OPTIONS }] = await Promise.all([import('./core.js'), import('./bytes.js'), import('./builder.js'), import('./external.js'), import('./options.js')]);
  checkOptions(options, MODEL_OPTIONS, 'buildModel');
  if (!(block instanceof Block)) throw new WebtrainError('buildModel: the second argument must be an onnxblock.Block');
  const core = await coreFor(options ?? {});
  const m = core.m;
  const entries = externalDataOption(options?.externalData, 'buildModel');
  const bytes = await readBytes(base);
  const [external] = await externalReaders(core, [{ model: base, bytes }], entries, 'buildModel');
  return withGenerator(core, bytes, { context: 'buildModel', loadContext: true, external }, async (b) => {
    const out = await withBuilder(b, () => block(...b.outputs()));
    const outputs = Array.isArray(out) ? out : [out];
    const result = core.takeBuf(b.with([outputs.join('\0')], (po) => m._wtw_gen_model_bytes(b.gen, po, outputs.length)), 'buildModel');
    const inputs = Array.from({ length: m._wtw_gen_input_count(b.gen) }, (_, i) => core.string(m._wtw_gen_input_name(b.gen, i)));
    return new OnnxblockModel(result, inputs, outputs);
  });
}
