// Direct transposed convolution, image side from grid side (ConvTranspose; ConvGrad's dX): one
// thread per image element y[n, c, p], gathering every (tap, grid channel of its group) whose
// window position o * stride - pad + k * dil lands on p, in order (no scatter, no atomics: the
// same bits at any grid). The bias (flags 1) is added last.
// include: conv_uniform
@group(0) @binding(1) var<storage, read_write> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> w: array<u32>;  // float32, or float16 pairs (flags 16)
@group(0) @binding(3) var<storage, read_write> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

// include: window
// include: half
// include: conv_weight

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 64u + li;
  if (i >= u.n) { return; }
  let I = u.img.x * u.img.y * u.img.z;
  let p = i % I;
  let c = (i / I) % u.ich;
  let b = i / I / u.ich;
  let q = coords3(p, u.img);
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
    let o0 = window_of(q.x, k0, u.stride.x, u.dil.x, u.pad.x, u.grid.x);
    if (o0 < 0) { continue; }
    for (var k1 = 0u; k1 < u.k.y; k1++) {
      let o1 = window_of(q.y, k1, u.stride.y, u.dil.y, u.pad.y, u.grid.y);
      if (o1 < 0) { continue; }
      for (var k2 = 0u; k2 < u.k.z; k2++) {
        let o2 = window_of(q.z, k2, u.stride.z, u.dil.z, u.pad.z, u.grid.z);
        if (o2 < 0) { continue; }
        let sa = sb + (u32(o0) * u.grid.y + u32(o1)) * u.grid.z + u32(o2);
        let wa = wb + (k0 * u.k.y + k1) * u.k.z + k2;
        for (var j = 0u; j < gg; j++) { s = fma(src[sa + j * G], load_w(wa + j * ig * K), s); }
      }
    }
  }
  if ((u.flags & 1u) != 0u) { s += bias[c]; }
  y[i] = s;
}
