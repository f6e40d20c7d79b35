// One pass of a sum over the middle axis of x viewed as [outer, n, inner] (from element x_off)
// into y (from y_off): one thread per output, adding its n terms in order (the same bits at any
// grid). The last pass of a mean divides by the count.
struct U {
  outer: u32, n: u32, inner: u32, gx: u32,
  divide: u32, count: f32, x_off: u32, y_off: u32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.outer * u.inner) { return; }
  let o = i / u.inner;
  let j = i % u.inner;
  var s = 0.0;
  for (var k = 0u; k < u.n; k++) { s += x[u.x_off + (o * u.n + k) * u.inner + j]; }
  if (u.divide != 0u) { s = s / u.count; }
  y[u.y_off + i] = s;
}
