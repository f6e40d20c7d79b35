// Convolution weight and bias gradients, each output a sum over the batch and the grid:
//   weight: dW[m, c, k] = sum over n, o of g[n, m, o] * x[n, group's c, o * stride - pad + k * dil]
//     (g the grid-side tensor with gch channels, x the image-side one with ich)
//   bias (flags 2): db[m] = sum over n and the plane of g[n, m, :], g grid-side, or image-side
//     with flags 4
// Either one workgroup per output, its 64 threads each summing a fixed strided share of the
// terms in order and a tree reduction in workgroup memory adding the shares in a fixed order;
// or (flags 8, for short sums over many outputs) one thread per output summing its terms in
// order. Either way the same bits run to run.
// include: conv_uniform
@group(0) @binding(1) var<storage, read_write> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

// include: tree

// Output e of dW: where its grid-side and image-side channels start, and its tap's offsets.
struct Weight { gb: u32, xb: u32, d0: i32, d1: i32, d2: i32 }

fn weight(e: u32) -> Weight {
  let I = u.img.x * u.img.y * u.img.z;
  let K = u.k.x * u.k.y * u.k.z;
  let cg = u.ich / u.group;
  let kk = e % K;
  let c = (e / K) % cg;
  let m = e / K / cg;
  let gi = m / (u.gch / u.group);
  let k2 = kk % u.k.z;
  let k1 = (kk / u.k.z) % u.k.y;
  let k0 = kk / (u.k.z * u.k.y);
  return Weight(m * u.grid.x * u.grid.y * u.grid.z, (gi * cg + c) * I, i32(k0 * u.dil.x) - u.pad.x,
                i32(k1 * u.dil.y) - u.pad.y, i32(k2 * u.dil.z) - u.pad.z);
}

// Term (b, o) of weight t, or 0 where its tap falls in the padding.
fn term(t: Weight, b: u32, o0: u32, o1: u32, o2: u32) -> f32 {
  let i0 = i32(o0 * u.stride.x) + t.d0;
  let i1 = i32(o1 * u.stride.y) + t.d1;
  let i2 = i32(o2 * u.stride.z) + t.d2;
  if (i0 < 0 || i0 >= i32(u.img.x) || i1 < 0 || i1 >= i32(u.img.y) || i2 < 0 || i2 >= i32(u.img.z)) { return 0.0; }
  let G = u.grid.x * u.grid.y * u.grid.z;
  let I = u.img.x * u.img.y * u.img.z;
  let gi = b * u.gch * G + t.gb + (o0 * u.grid.y + o1) * u.grid.z + o2;
  let xi = b * u.ich * I + t.xb + (u32(i0) * u.img.y + u32(i1)) * u.img.z + u32(i2);
  return g[gi] * x[xi];
}

// The terms j = first, first + step, ... (j = (n, o) over batch and grid) of weight e, in order.
fn weight_share(e: u32, first: u32, step: u32) -> f32 {
  let t = weight(e);
  let G = u.grid.x * u.grid.y * u.grid.z;
  var s = 0.0;
  for (var j = first; j < u.batch * G; j += step) {
    let o = j % G;
    s += term(t, j / G, o / (u.grid.z * u.grid.y), (o / u.grid.z) % u.grid.y, o % u.grid.z);
  }
  return s;
}

// The grid positions [lo, hi) along one axis whose tap (offset d) lands inside the image.
fn valid(d: i32, stride: u32, img: u32, grid: u32) -> vec2u {
  let s = i32(stride);
  let lo = select(0, (-d + s - 1) / s, d < 0);
  let hi = select(0, (i32(img) - d + s - 1) / s, i32(img) > d);
  return vec2u(u32(lo), u32(clamp(hi, lo, i32(grid))));
}

// All the terms of weight e in the same order (those in the padding are zeros: left out), by
// nested loops over the valid positions only (no division or bounds check per term).
fn weight_all(e: u32) -> f32 {
  let t = weight(e);
  let r0 = valid(t.d0, u.stride.x, u.img.x, u.grid.x);
  let r1 = valid(t.d1, u.stride.y, u.img.y, u.grid.y);
  let r2 = valid(t.d2, u.stride.z, u.img.z, u.grid.z);
  let G = u.grid.x * u.grid.y * u.grid.z;
  let I = u.img.x * u.img.y * u.img.z;
  var s = 0.0;
  for (var b = 0u; b < u.batch; b++) {
    let gb = b * u.gch * G + t.gb;
    let xb = b * u.ich * I + t.xb;
    for (var o0 = r0.x; o0 < r0.y; o0++) {
      let i0 = u32(i32(o0 * u.stride.x) + t.d0);
      for (var o1 = r1.x; o1 < r1.y; o1++) {
        let i1 = u32(i32(o1 * u.stride.y) + t.d1);
        let gr = gb + (o0 * u.grid.y + o1) * u.grid.z;
        let xr = xb + (i0 * u.img.y + i1) * u.img.z;
        for (var o2 = r2.x; o2 < r2.y; o2++) {
          s += g[gr + o2] * x[xr + u32(i32(o2 * u.stride.z) + t.d2)];
        }
      }
    }
  }
  return s;
}

// The bias's operand: dY grid-side, or image-side (flags 4): its channels and plane.
fn plane() -> u32 {
  return select(u.grid.x * u.grid.y * u.grid.z, u.img.x * u.img.y * u.img.z, (u.flags & 4u) != 0u);
}
fn channels() -> u32 { return select(u.gch, u.ich, (u.flags & 4u) != 0u); }

fn bias_share(m: u32, first: u32, step: u32) -> f32 {
  let P = plane();
  var s = 0.0;
  for (var j = first; j < u.batch * P; j += step) { s += g[((j / P) * channels() + m) * P + j % P]; }
  return s;
}

fn bias_all(m: u32) -> f32 {
  let P = plane();
  var s = 0.0;
  for (var b = 0u; b < u.batch; b++) {
    let base = (b * channels() + m) * P;
    for (var p = 0u; p < P; p++) { s += g[base + p]; }
  }
  return s;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let bias = (u.flags & 2u) != 0u;
  if ((u.flags & 8u) != 0u) {
    let t = (wg.y * u.gx + wg.x) * 64u + li;
    if (t < u.n && bias) { out[t] = bias_all(t); }
    if (t < u.n && !bias) { out[t] = weight_all(t); }
    return;
  }
  let e = wg.y * u.gx + wg.x;
  if (e >= u.n) { return; }
  var v = 0.0;
  if (bias) {
    v = bias_share(e, li, 64u);
  } else {
    v = weight_share(e, li, 64u);
  }
  let s = tree_sum(li, v);
  if (li == 0u) { out[e] = s; }
}
