// Convolution weight and bias gradients, one workgroup per output element: its 64 threads each
// sum a fixed, strided share of the batch-and-grid terms in order, then a tree reduction in
// workgroup memory adds the 64 partial sums in a fixed order (the same bits run to run).
//   weight: dW[m, c, k] = sum over n, o of g[n, m, o] * x[n, group's c, o * stride - pad + k * dil]
//     (g the grid-side tensor with gch channels, x the image-side one with ich)
//   bias (flags 2): db[m] = sum over n and the plane of g[n, m, :], g grid-side, or image-side
//     with flags 4
struct U {
  n: u32, gx: u32, flags: u32, group: u32,
  batch: u32, gch: u32, ich: u32, pad_: u32,
  img: vec4u, grid: vec4u, k: vec4u, stride: vec4u, dil: vec4u, pad: vec4i,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

var<workgroup> part: array<f32, 64>;

fn weight_share(e: u32, li: u32) -> f32 {
  let G = u.grid.x * u.grid.y * u.grid.z;
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
  let d0 = i32(k0 * u.dil.x) - u.pad.x;
  let d1 = i32(k1 * u.dil.y) - u.pad.y;
  let d2 = i32(k2 * u.dil.z) - u.pad.z;
  var s = 0.0;
  for (var j = li; j < u.batch * G; j += 64u) {
    let b = j / G;
    let o = j % G;
    let o2 = o % u.grid.z;
    let o1 = (o / u.grid.z) % u.grid.y;
    let o0 = o / (u.grid.z * u.grid.y);
    let i0 = i32(o0 * u.stride.x) + d0;
    let i1 = i32(o1 * u.stride.y) + d1;
    let i2 = i32(o2 * u.stride.z) + d2;
    if (i0 < 0 || i0 >= i32(u.img.x) || i1 < 0 || i1 >= i32(u.img.y) || i2 < 0 || i2 >= i32(u.img.z)) { continue; }
    let xi = (b * u.ich + gi * cg + c) * I + (u32(i0) * u.img.y + u32(i1)) * u.img.z + u32(i2);
    s = fma(g[(b * u.gch + m) * G + o], x[xi], s);
  }
  return s;
}

fn bias_share(m: u32, li: u32) -> f32 {
  let img_side = (u.flags & 4u) != 0u;
  let P = select(u.grid.x * u.grid.y * u.grid.z, u.img.x * u.img.y * u.img.z, img_side);
  let ch = select(u.gch, u.ich, img_side);
  var s = 0.0;
  for (var j = li; j < u.batch * P; j += 64u) { s += g[((j / P) * ch + m) * P + j % P]; }
  return s;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let e = wg.y * u.gx + wg.x;
  if (e >= u.n) { return; }
  if ((u.flags & 2u) != 0u) {
    part[li] = bias_share(e, li);
  } else {
    part[li] = weight_share(e, li);
  }
  workgroupBarrier();
  for (var h = 32u; h > 0u; h = h >> 1u) {
    if (li < h) { part[li] += part[li + h]; }
    workgroupBarrier();
  }
  if (li == 0u) { out[e] = part[0]; }
}
