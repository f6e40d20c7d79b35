/* The op families: each a file of src/ops/ defining ops (its table wt_ops_<family>[]) and, in
 * each backend that runs them, a file of kernels (the CPU's: src/backend/cpu/run_<family>.c,
 * its table wt_cpu_kernels_<family>[]). The op registry and the CPU backend list the same
 * families from here. */
#ifndef WT_OPS_FAMILIES_H
#define WT_OPS_FAMILIES_H

#define WT_OP_FAMILIES(X) \
  X(binary)           \
  X(conv)             \
  X(data)             \
  X(data_index)       \
  X(einsum)           \
  X(gemm)             \
  X(norm)             \
  X(norm_extra)       \
  X(norm_grad)        \
  X(pool)             \
  X(reduce)           \
  X(resize)           \
  X(rnn)              \
  X(shape)            \
  X(shape_build)      \
  X(softmax)          \
  X(softmax_grad)     \
  X(training)         \
  X(unary)            \
  X(unary_grad)

#endif
