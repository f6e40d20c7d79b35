// A train step's loss checked where it was computed: status[0] = 1 when every element is
// finite, else 0. By the bits, since WGSL lets a compiler assume floats are finite, so no
// comparison of values would do. What runs after the step reads it: a loss that is not finite
// skips the optimizer's update and the BatchNorm write-back, and its gradients are discarded,
// as the CPU backend does (a step's loss is known there before anything else runs).
struct U { n: u32, is_float: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> loss: array<u32>;
@group(0) @binding(2) var<storage, read_write> status: array<u32>;
var<workgroup> bad: atomic<u32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
  if (u.is_float != 0u) {
    for (var i = li; i < u.n; i += 64u) {
      if ((loss[i] & 0x7f800000u) == 0x7f800000u) { atomicOr(&bad, 1u); }
    }
  }
  workgroupBarrier();
  if (li == 0u) { status[0] = 1u - atomicLoad(&bad); }
}
