// Direct transposed convolution, image side from grid side (ConvTranspose; ConvGrad's dX): one
// thread per image element y[n, c, p], gathering every (tap, grid channel of its group) whose
// window position o * stride - pad + k * dil lands on p, in order (no scatter, no atomics: the
// same bits at any grid). The bias is added last.
struct U {
  n: u32, gx: u32, flags: u32, group: u32,  // flags: 1 bias
  batch: u32, gch: u32, ich: u32, pad_: u32,
  img: vec4u, grid: vec4u, k: vec4u, stride: vec4u, dil: vec4u, pad: vec4i,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

// The grid position whose tap k reaches image position p along one axis, or -1.
// (Stride 1 skips the division: integer division is dear on some adapters.)
fn source(p: u32, k: u32, stride: u32, dil: u32, pad: i32, n: u32) -> i32 {
  let t = i32(p) + pad - i32(k * dil);
  if (t < 0) { return -1; }
  var o = t;
  if (stride != 1u) {
    if (t % i32(stride) != 0) { return -1; }
    o = t / i32(stride);
  }
  return select(-1, o, o < i32(n));
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 64u + li;
  if (i >= u.n) { return; }
  let I = u.img.x * u.img.y * u.img.z;
  let p = i % I;
  let c = (i / I) % u.ich;
  let b = i / I / u.ich;
  let p2 = p % u.img.z;
  let p1 = (p / u.img.z) % u.img.y;
  let p0 = p / (u.img.z * u.img.y);
  let ig = u.ich / u.group;
  let gg = u.gch / u.group;
  let gi = c / ig;
  let K = u.k.x * u.k.y * u.k.z;
  let G = u.grid.x * u.grid.y * u.grid.z;
  let sb = (b * u.gch + gi * gg) * G;
  let wb = (gi * gg * ig + c % ig) * K;
  var s = 0.0;
  // taps outer (each axis's source position found once), the group's grid channels inner
  for (var k0 = 0u; k0 < u.k.x; k0++) {
    let o0 = source(p0, k0, u.stride.x, u.dil.x, u.pad.x, u.grid.x);
    if (o0 < 0) { continue; }
    for (var k1 = 0u; k1 < u.k.y; k1++) {
      let o1 = source(p1, k1, u.stride.y, u.dil.y, u.pad.y, u.grid.y);
      if (o1 < 0) { continue; }
      for (var k2 = 0u; k2 < u.k.z; k2++) {
        let o2 = source(p2, k2, u.stride.z, u.dil.z, u.pad.z, u.grid.z);
        if (o2 < 0) { continue; }
        let sa = sb + (u32(o0) * u.grid.y + u32(o1)) * u.grid.z + u32(o2);
        let wa = wb + (k0 * u.k.y + k1) * u.k.z + k2;
        for (var j = 0u; j < gg; j++) { s = fma(src[sa + j * G], w[wa + j * ig * K], s); }
      }
    }
  }
  if ((u.flags & 1u) != 0u) { s += bias[c]; }
  y[i] = s;
}
