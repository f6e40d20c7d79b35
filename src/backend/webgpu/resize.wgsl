// One axis of a resize over [outer, in, inner] <-> [outer, out, inner], one thread per element
// written. The taps of output position o follow ONNX Resize (and the CPU's tap tables): the
// source coordinate x of o (coordinate_transformation_mode), its neighbours left of x (an
// integral x is the right one of its pair), nearest rounding or linear / cubic weights,
// exclude_outside, indices clamped to the axis; zero weights dropped.
//   grad 0: y[o] = sum over o's taps of w * x[idx], in tap order
//   grad 1 (the adjoint): dx[i] = sum over positions o whose taps name i of w * dy[o], o rising
//     (the CPU scatter's order), gathered: x(o) rises with o, so only o with x(o) near i are
//     visited (found by bisection), and all below / above for the clamped ends
struct U {
  n: u32, gx: u32, in_d: u32, out_d: u32,
  inner: u32, mode: u32, coord: u32, nearest: u32,  // mode: 0 nearest, 1 linear, 2 cubic
  exclude: u32, grad: u32, cubic_a: f32, inv_scale: f32,
  ratio: f32, one_out: u32,                         // one_out: 1 out == 1, 2 scale * in == 1
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

struct Taps { n: u32, idx: array<u32, 4>, w: array<f32, 4> }

fn coord(o: u32) -> f32 {
  let f = f32(o);
  switch u.coord {
    case 1u: { return select((f + 0.5) * u.inv_scale - 0.5, -0.5, (u.one_out & 1u) != 0u); }
    case 2u: { return select(f * u.ratio, 0.0, o == 0u || (u.one_out & 2u) != 0u); }
    case 3u: { return f * u.inv_scale; }
    case 4u: { return (f + 0.5) * u.inv_scale; }
    default: { return (f + 0.5) * u.inv_scale - 0.5; }
  }
}

fn taps_of(o: u32) -> Taps {
  let x = coord(o);
  let fl = floor(x);
  var base = i32(fl);
  var r = x - fl;
  if (x == fl) {
    base = i32(fl) - 1;
    r = 1.0;
  }
  var id: array<i32, 4>;
  var w: array<f32, 4>;
  var n = 1u;
  if (u.mode == 0u) {
    var up = r > 0.5;  // round_prefer_floor
    if (r == 1.0 || u.nearest == 3u) { up = true; }
    else if (u.nearest == 1u) { up = r >= 0.5; }
    else if (u.nearest == 2u) { up = false; }
    id[0] = base + select(0, 1, up);
    w[0] = 1.0;
  } else if (u.mode == 1u) {
    id[0] = base;
    id[1] = base + 1;
    w[0] = 1.0 - r;
    w[1] = r;
    n = 2u;
  } else {
    let A = u.cubic_a;
    let s = 1.0 - r;
    for (var k = 0; k < 4; k++) { id[k] = base - 1 + k; }
    w[0] = ((A * (r + 1.0) - 5.0 * A) * (r + 1.0) + 8.0 * A) * (r + 1.0) - 4.0 * A;
    w[1] = ((A + 2.0) * r - (A + 3.0)) * r * r + 1.0;
    w[2] = ((A + 2.0) * s - (A + 3.0)) * s * s + 1.0;
    w[3] = ((A * (s + 1.0) - 5.0 * A) * (s + 1.0) + 8.0 * A) * (s + 1.0) - 4.0 * A;
    n = 4u;
  }
  if (u.exclude != 0u && n > 1u) {
    var sum = 0.0;
    for (var k = 0u; k < n; k++) {
      if (id[k] < 0 || id[k] >= i32(u.in_d)) { w[k] = 0.0; }
      sum += w[k];
    }
    if (sum != 0.0) {
      for (var k = 0u; k < n; k++) { w[k] = w[k] / sum; }
    }
  }
  var t: Taps;
  for (var k = 0u; k < n; k++) {
    if (w[k] == 0.0) { continue; }
    t.idx[t.n] = u32(clamp(id[k], 0, i32(u.in_d) - 1));
    t.w[t.n] = w[k];
    t.n++;
  }
  return t;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.n) { return; }
  let j = i % u.inner;
  if (u.grad == 0u) {
    let o = (i / u.inner) % u.out_d;
    let b = i / u.inner / u.out_d;
    let t = taps_of(o);
    var acc = 0.0;
    if (t.n > 0u) { acc = t.w[0] * src[(b * u.in_d + t.idx[0]) * u.inner + j]; }
    for (var k = 1u; k < t.n; k++) { acc = fma(t.w[k], src[(b * u.in_d + t.idx[k]) * u.inner + j], acc); }
    dst[i] = acc;
    return;
  }
  let p = (i / u.inner) % u.in_d;
  let b = i / u.inner / u.in_d;
  let fp = f32(p);
  // the first o with x(o) >= p - 3 (taps lie within [x - 3, x + 2]); from 0 for p = 0
  var lo = 0u;
  var hi = u.out_d;
  if (p > 0u) {
    while (lo < hi) {
      let mid = (lo + hi) / 2u;
      if (coord(mid) < fp - 3.0) { lo = mid + 1u; } else { hi = mid; }
    }
  }
  var acc = 0.0;
  for (var o = lo; o < u.out_d; o++) {
    if (p + 1u < u.in_d && coord(o) > fp + 4.0) { break; }
    let t = taps_of(o);
    for (var k = 0u; k < t.n; k++) {
      if (t.idx[k] == p) { acc = fma(t.w[k], src[(b * u.out_d + o) * u.inner + j], acc); }
    }
  }
  dst[i] = acc;
}
