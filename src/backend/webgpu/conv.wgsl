// Direct convolution, grid side from image side (Conv; ConvTransposeGrad's dX): one thread per
// output y[n, m, o] over the 3-D-normalized grid, its sum over the kernel taps and the group's
// img channels in order (the same bits at any grid), the bias (flags 1) added last. Taps in the
// padding are skipped.
// include: conv_uniform
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
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
  let G = u.grid.x * u.grid.y * u.grid.z;
  let o = i % G;
  let m = (i / G) % u.gch;
  let b = i / G / u.gch;
  let cg = u.ich / u.group;
  let gi = m / (u.gch / u.group);
  let K = u.k.x * u.k.y * u.k.z;
  let I = u.img.x * u.img.y * u.img.z;
  let st = window_start(coords3(o, u.grid));
  let xb = (b * u.ich + gi * cg) * I;
  let wb = m * cg * K;
  var s = 0.0;
  // taps outer, channels inner: each tap's bounds are checked once
  for (var k0 = 0u; k0 < u.k.x; k0++) {
    let i0 = st.x + i32(k0 * u.dil.x);
    if (i0 < 0 || i0 >= i32(u.img.x)) { continue; }
    for (var k1 = 0u; k1 < u.k.y; k1++) {
      let i1 = st.y + i32(k1 * u.dil.y);
      if (i1 < 0 || i1 >= i32(u.img.y)) { continue; }
      for (var k2 = 0u; k2 < u.k.z; k2++) {
        let i2 = st.z + i32(k2 * u.dil.z);
        if (i2 < 0 || i2 >= i32(u.img.z)) { continue; }
        let xa = xb + (u32(i0) * u.img.y + u32(i1)) * u.img.z + u32(i2);
        let wa = wb + (k0 * u.k.y + k1) * u.k.z + k2;
        for (var c = 0u; c < cg; c++) { s = fma(x[xa + c * I], load_w(wa + c * K), s); }
      }
    }
  }
  if ((u.flags & 1u) != 0u) { s += bias[m]; }
  y[i] = s;
}
