/* The shape family on the GPU: the ops a plan turns into views of their input (the bytes are
 * shared; nothing runs). */
#include "backend/webgpu/kernel.h"

const wt_gpu_kernel wt_gpu_kernels_shape[] = {
    {.key = {"", "Reshape"}},
    {.key = {"", "Flatten"}},
    {.key = {"", "Squeeze"}},
    {.key = {"", "Unsqueeze"}},
    {.key = {0}},
};
