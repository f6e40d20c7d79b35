// SoftmaxCrossEntropyLossGrad: dx[n, c, d] = (exp(lp) - [c == label]) * s over scores [N, C, D],
// s = dy (sum), dy / the count of labels not ignored (mean), dy[n, d] (none); 0 for an ignored
// row. The count is counted by each workgroup's threads in a fixed order (its labels are few
// next to the scores).
struct U {
  n: u32, C: u32, D: u32, gx: u32,
  lstride: u32, has_ignore: u32, ignore: i32, reduction: u32,  // 0 none, 1 sum, 2 mean
  rows: u32, pad0: u32, pad1: u32, pad2: u32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> dy: array<f32>;
@group(0) @binding(2) var<storage, read_write> lp: array<f32>;
@group(0) @binding(3) var<storage, read_write> labels: array<i32>;
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;

var<workgroup> part: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  var scale = 1.0;
  if (u.reduction == 2u) {
    var k = 0u;
    for (var r = li; r < u.rows; r += 256u) {
      k += select(1u, 0u, u.has_ignore != 0u && labels[r * u.lstride] == u.ignore);
    }
    part[li] = k;
    workgroupBarrier();
    for (var w = 128u; w > 0u; w = w >> 1u) {
      if (li < w) { part[li] += part[li + w]; }
      workgroupBarrier();
    }
    scale = f32(part[0]);
  }
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.n) { return; }
  let d = i % u.D;
  let c = (i / u.D) % u.C;
  let nn = i / (u.C * u.D);
  let r = nn * u.D + d;
  let t = labels[r * u.lstride];
  if (u.has_ignore != 0u && t == u.ignore) {
    dx[i] = 0.0;
    return;
  }
  var s = select(dy[0], dy[r], u.reduction == 0u);
  if (u.reduction == 2u && scale != 0.0) { s = s / scale; }
  dx[i] = select(exp(lp[i]), exp(lp[i]) - 1.0, i32(c) == t) * s;
}
