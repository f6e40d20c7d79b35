// The numbers that cross the C/JavaScript boundary, mirrored once from their C definitions:
// the public enums of include/webtrain.h (status codes, element types, loss and optimizer
// kinds, module modes, property types) and the wasm ABI's selectors and record slots of
// src/wasm/abi.h. Every JavaScript file takes them from here. tests/js/abi.test.mjs parses both
// headers and fails when an enum below disagrees with its C definition (a name missing on
// either side, or another value).
//
// Each enum is keyed by its C enumerators without their prefix (WT_ERR_SHAPE -> Status.ERR_SHAPE);
// `C_ENUMS` names the C enum and the prefix of each, for the test.

/** enum wt_status (include/webtrain.h). */
export const Status = Object.freeze({
  OK: 0,
  ERR_INVALID_ARG: 1,
  ERR_PARSE: 2,
  ERR_UNSUPPORTED: 3,
  ERR_SHAPE: 4,
  ERR_NO_MEMORY: 5,
  ERR_IO: 6,
  ERR_RUNTIME: 7,
  ERR_INTERNAL: 8,
});

/** enum wt_dtype: ONNX TensorProto codes of the element types webtrain computes with. */
export const DType = Object.freeze({ UNDEFINED: 0, FLOAT: 1, INT32: 6, INT64: 7, BOOL: 9, FLOAT16: 10 });

/** enum wt_loss_type: ONNX Runtime's LossType numbering. */
export const Loss = Object.freeze({ NONE: 0, MSE: 1, CE: 2, BCE: 3, L1: 4 });

/** enum wt_optim_type: ONNX Runtime's OptimType numbering. */
export const Optim = Object.freeze({ NONE: 0, ADAMW: 1, SGD: 2 });

/** artifacts.LossType and OptimType: the same kinds under ONNX Runtime's Python names. */
export const LossType = Object.freeze({ MSELoss: Loss.MSE, CrossEntropyLoss: Loss.CE, BCEWithLogitsLoss: Loss.BCE, L1Loss: Loss.L1 });
export const OptimType = Object.freeze({ AdamW: Optim.ADAMW, SGD: Optim.SGD });

/** enum wt_module_mode: the `eval` argument of the module functions. */
export const Mode = Object.freeze({ TRAIN: 0, EVAL: 1, PREDICT: 2 });

/** enum wt_property_type: checkpoint property types. */
export const PropertyType = Object.freeze({ INT: 1, FLOAT: 2, STRING: 3 });

/** enum wtw_name_list (src/wasm/abi.h): the name lists of wtw_gen_add_name. */
export const NameList = Object.freeze({ REQUIRES_GRAD: 0, FROZEN_PARAMS: 1, ADDITIONAL_OUTPUTS: 2, LOSS_INPUTS: 3, LORA_TARGETS: 4 });

/** enum wtw_loss_weights: which weights wtw_gen_set_loss_weights sets. */
export const LossWeights = Object.freeze({ WEIGHT: 0, POS_WEIGHT: 1 });

/** enum wtw_gen_result: the artifacts wtw_gen_result_data/_size return. */
export const GenResult = Object.freeze({ TRAINING_MODEL: 0, EVAL_MODEL: 1, OPTIMIZER_MODEL: 2, CHECKPOINT: 3, NOMINAL_CHECKPOINT: 4 });

/** enum wtw_io_side: a model's inputs or outputs (wtw_model_info_io_*). */
export const IoSide = Object.freeze({ INPUTS: 0, OUTPUTS: 1 });

/** enum wtw_io_kind: what a model input/output holds. */
export const IoKind = Object.freeze({ TENSOR: 0, SEQUENCE: 1 });

/** enum wtw_op_support: what webtrain has for an op. */
export const OpSupport = Object.freeze({ NONE: 0, FORWARD: 1, GRADIENT: 2 });

/** enum wtw_heap_stat: the slots of wtw_heap_stats' record (COUNT doubles). */
export const HeapStat = Object.freeze({ MEMORY: 0, HEAP_BASE: 1, HEAP_TOP: 2, MALLOC_IN_USE: 3, MALLOC_FOOTPRINT: 4, MALLOC_PEAK: 5, COUNT: 6 });

/** enum wtw_module_mem: the slots of wtw_module_memory's record (COUNT doubles). */
export const ModuleMem = Object.freeze({ ARENA: 0, LIVE_PEAK_TRAIN: 1, LIVE_PEAK_EVAL: 2, SAVED: 3, PARAMS: 4, GRADS: 5, MOMENTS: 6, PACKED: 7, COUNT: 8 });

/** Which C enum each mirror is, with the prefix its enumerators carry (for tests/js/abi.test.mjs). */
export const C_ENUMS = Object.freeze({
  Status: { header: 'include/webtrain.h', name: 'wt_status', prefix: 'WT_' },
  DType: { header: 'include/webtrain.h', name: 'wt_dtype', prefix: 'WT_' },
  Loss: { header: 'include/webtrain.h', name: 'wt_loss_type', prefix: 'WT_LOSS_TYPE_' },
  Optim: { header: 'include/webtrain.h', name: 'wt_optim_type', prefix: 'WT_OPTIM_' },
  Mode: { header: 'include/webtrain.h', name: 'wt_module_mode', prefix: 'WT_MODE_' },
  PropertyType: { header: 'include/webtrain.h', name: 'wt_property_type', prefix: 'WT_PROPERTY_' },
  NameList: { header: 'src/wasm/abi.h', name: 'wtw_name_list', prefix: 'WTW_NAMES_' },
  LossWeights: { header: 'src/wasm/abi.h', name: 'wtw_loss_weights', prefix: 'WTW_WEIGHTS_' },
  GenResult: { header: 'src/wasm/abi.h', name: 'wtw_gen_result', prefix: 'WTW_RESULT_' },
  IoSide: { header: 'src/wasm/abi.h', name: 'wtw_io_side', prefix: 'WTW_IO_' },
  IoKind: { header: 'src/wasm/abi.h', name: 'wtw_io_kind', prefix: 'WTW_KIND_' },
  OpSupport: { header: 'src/wasm/abi.h', name: 'wtw_op_support', prefix: 'WTW_SUPPORT_' },
  HeapStat: { header: 'src/wasm/abi.h', name: 'wtw_heap_stat', prefix: 'WTW_HEAP_' },
  ModuleMem: { header: 'src/wasm/abi.h', name: 'wtw_module_mem', prefix: 'WTW_MEM_' },
});

/** The JavaScript field name of an enumerator: LIVE_PEAK_TRAIN -> livePeakTrain. */
export function fieldName(key) {
  return key.toLowerCase().replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

/**
 * A record of doubles the ABI filled (`slots`: HeapStat, ModuleMem, ...) as an object with one
 * named field per slot (fieldName of its enumerator). `f64` is a Float64Array over the record.
 */
export function readRecord(slots, f64) {
  const out = {};
  for (const [k, i] of Object.entries(slots)) if (k !== 'COUNT') out[fieldName(k)] = f64[i];
  return out;
}
