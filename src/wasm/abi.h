/* Selectors and record layouts of the flat wasm ABI (src/wasm/api*.c), named once: the integer
 * arguments that pick a list, a result or a graph side, and the slots of the double[] records the
 * ABI fills. js/abi.js mirrors these enums (with include/webtrain.h's); tests/js/abi.test.mjs
 * fails when the two disagree. A record's *_COUNT is its length in doubles. */
#ifndef WT_WASM_ABI_H
#define WT_WASM_ABI_H

/* wtw_gen_add_name: which name list of the artifact options. */
enum wtw_name_list {
  WTW_NAMES_REQUIRES_GRAD = 0,
  WTW_NAMES_FROZEN_PARAMS = 1,
  WTW_NAMES_ADDITIONAL_OUTPUTS = 2,
  WTW_NAMES_LOSS_INPUTS = 3,
  WTW_NAMES_LORA_TARGETS = 4
};

/* wtw_gen_set_loss_weights: which weights. */
enum wtw_loss_weights { WTW_WEIGHTS_WEIGHT = 0, WTW_WEIGHTS_POS_WEIGHT = 1 };

/* wtw_gen_result_data / _size: which generated artifact. */
enum wtw_gen_result {
  WTW_RESULT_TRAINING_MODEL = 0,
  WTW_RESULT_EVAL_MODEL = 1,
  WTW_RESULT_OPTIMIZER_MODEL = 2,
  WTW_RESULT_CHECKPOINT = 3,
  WTW_RESULT_NOMINAL_CHECKPOINT = 4
};

/* wtw_model_info_io_*: the graph's inputs or outputs. */
enum wtw_io_side { WTW_IO_INPUTS = 0, WTW_IO_OUTPUTS = 1 };
/* wtw_model_info_io_kind: what an input/output holds. */
enum wtw_io_kind { WTW_KIND_TENSOR = 0, WTW_KIND_SEQUENCE = 1 };
/* wtw_model_info_op_support: what webtrain has for an op. */
enum wtw_op_support { WTW_SUPPORT_NONE = 0, WTW_SUPPORT_FORWARD = 1, WTW_SUPPORT_GRADIENT = 2 };

/* wtw_heap_stats(out): the slots of out (bytes). */
enum wtw_heap_stat {
  WTW_HEAP_MEMORY = 0,            /* the wasm Memory's size */
  WTW_HEAP_HEAP_BASE = 1,         /* heap start (static data and the stack end there) */
  WTW_HEAP_HEAP_TOP = 2,          /* top of the heap, sbrk(0) */
  WTW_HEAP_MALLOC_IN_USE = 3,     /* bytes malloc'd now */
  WTW_HEAP_MALLOC_FOOTPRINT = 4,  /* bytes malloc took from the heap so far */
  WTW_HEAP_MALLOC_PEAK = 5,       /* the footprint's peak */
  WTW_HEAP_COUNT = 6
};

/* wtw_module_memory(m, out): the slots of out (bytes). */
enum wtw_module_mem {
  WTW_MEM_ARENA = 0,              /* the activation arena (training and eval plans share it) */
  WTW_MEM_LIVE_PEAK_TRAIN = 1,    /* the training plan's live peak (activations + scratch) */
  WTW_MEM_LIVE_PEAK_EVAL = 2,     /* the eval plan's */
  WTW_MEM_SAVED = 3,              /* forward activations the backward pass reads */
  WTW_MEM_PARAMS = 4,             /* the state's parameters, */
  WTW_MEM_GRADS = 5,              /* gradient buffers */
  WTW_MEM_MOMENTS = 6,            /* and optimizer moments */
  WTW_MEM_PACKED = 7,             /* frozen weights packed once for the GEMM (bounded copies) */
  WTW_MEM_COUNT = 8
};

#endif
