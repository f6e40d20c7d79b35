// Softmax along the middle axis of [outer, n, inner], one thread per (outer, inner) row, sums in
// order: mode 0 softmax, 1 log-softmax of a; 2 softmax's gradient (a = dy, b = y: dx = y (dy -
// sum dy y)), 3 log-softmax's (dx = dy - exp(y) sum dy).
struct U { outer: u32, n: u32, inner: u32, gx: u32, mode: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let r = (wg.y * u.gx + wg.x) * 64u + li;
  if (r >= u.outer * u.inner) { return; }
  let base = (r / u.inner) * u.n * u.inner + r % u.inner;
  let st = u.inner;
  if (u.mode < 2u) {
    var m = -3.402823466e38;
    for (var k = 0u; k < u.n; k++) { m = max(m, a[base + k * st]); }
    var s = 0.0;
    for (var k = 0u; k < u.n; k++) { s += exp(a[base + k * st] - m); }
    if (u.mode == 1u) {
      let lse = log(s);
      for (var k = 0u; k < u.n; k++) { y[base + k * st] = (a[base + k * st] - m) - lse; }
    } else {
      for (var k = 0u; k < u.n; k++) { y[base + k * st] = exp(a[base + k * st] - m) / s; }
    }
    return;
  }
  var s = 0.0;
  if (u.mode == 2u) {
    for (var k = 0u; k < u.n; k++) { s += a[base + k * st] * b[base + k * st]; }
    for (var k = 0u; k < u.n; k++) { y[base + k * st] = b[base + k * st] * (a[base + k * st] - s); }
  } else {
    for (var k = 0u; k < u.n; k++) { s += a[base + k * st]; }
    for (var k = 0u; k < u.n; k++) { y[base + k * st] = a[base + k * st] - exp(b[base + k * st]) * s; }
  }
}
