// The cross-entropy loss from its per-row (loss, weight) terms, in one workgroup: thread t adds
// rows t, t + 256, ... in order, then a fixed tree adds the threads' sums: the sum, the mean
// (sum / weights), or (reduction none) each row's loss.
struct U { rows: u32, reduction: u32, pad0: u32, pad1: u32 }  // reduction: 0 none, 1 sum, 2 mean
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> terms: array<vec2f>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

var<workgroup> part: array<vec2f, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32) {
  if (u.reduction == 0u) {
    for (var r = li; r < u.rows; r += 256u) { y[r] = terms[r].x; }
    return;
  }
  var s = vec2f(0.0, 0.0);
  for (var r = li; r < u.rows; r += 256u) { s += terms[r]; }
  part[li] = s;
  workgroupBarrier();
  for (var w = 128u; w > 0u; w = w >> 1u) {
    if (li < w) { part[li] += part[li + w]; }
    workgroupBarrier();
  }
  if (li == 0u) { y[0] = select(part[0].x, part[0].x / part[0].y, u.reduction == 2u); }
}
