// The gradients of a train step whose loss was not finite (loss_check.wgsl's status 0) are
// discarded: zeroed, so that the next step's accumulation starts from nothing, as on the CPU
// the next step overwrites them.
struct U { n: u32, gx: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> status: array<u32>;
@group(0) @binding(2) var<storage, read_write> g: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  if (status[0] != 0u) { return; }
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i < u.n) { g[i] = 0.0; }
}
