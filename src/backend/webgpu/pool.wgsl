// MaxPool / AveragePool over the 3-D-normalized window geometry, one thread per output y[nc, o]
// over its window's taps in order. Max (mode 0): the first maximum wins (strict >, from -FLT_MAX,
// or with flags 1 from the first tap, as the CPU's two paths), an empty window gives -FLT_MAX and
// index -1; with flags 1 also the int64 Indices (two words each: the flat row-major input index). Average (mode 1):
// the taps summed column by column (each kernel column's rows, then the columns, as the CPU
// does), divided by the window's tap count inside the input, or inside the padded extent with
// flags 2 (count_include_pad); a window with no input tap gives 0.
// include: pool_uniform
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> ind: array<u32>;

// include: window
// include: pool_divisor

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.n) { return; }
  let G = u.grid.x * u.grid.y * u.grid.z;
  let I = u.img.x * u.img.y * u.img.z;
  let nc = i / G;
  let o = i % G;
  let st = window_start(coords3(o, u.grid));
  let xb = nc * I;
  if (u.mode == 0u) {
    let indices = (u.flags & 1u) != 0u;
    var best = -3.402823466e38;
    var bi = -1;
    for (var k0 = 0u; k0 < u.k.x; k0++) {
      let i0 = st.x + i32(k0 * u.dil.x);
      if (i0 < 0 || i0 >= i32(u.img.x)) { continue; }
      for (var k1 = 0u; k1 < u.k.y; k1++) {
        let i1 = st.y + i32(k1 * u.dil.y);
        if (i1 < 0 || i1 >= i32(u.img.y)) { continue; }
        for (var k2 = 0u; k2 < u.k.z; k2++) {
          let i2 = st.z + i32(k2 * u.dil.z);
          if (i2 < 0 || i2 >= i32(u.img.z)) { continue; }
          let at = (u32(i0) * u.img.y + u32(i1)) * u.img.z + u32(i2);
          let v = x[xb + at];
          if ((bi < 0 && indices) || v > best) {
            best = v;
            bi = i32(at);
          }
        }
      }
    }
    y[i] = best;
    if (indices) {
      ind[2u * i] = select(xb + u32(bi), 0xffffffffu, bi < 0);
      ind[2u * i + 1u] = select(0u, 0xffffffffu, bi < 0);
    }
    return;
  }
  var s = 0.0;
  var inside = false;
  for (var k2 = 0u; k2 < u.k.z; k2++) {
    let i2 = st.z + i32(k2 * u.dil.z);
    if (i2 < 0 || i2 >= i32(u.img.z)) { continue; }
    var col = 0.0;
    for (var k0 = 0u; k0 < u.k.x; k0++) {
      let i0 = st.x + i32(k0 * u.dil.x);
      if (i0 < 0 || i0 >= i32(u.img.x)) { continue; }
      for (var k1 = 0u; k1 < u.k.y; k1++) {
        let i1 = st.y + i32(k1 * u.dil.y);
        if (i1 < 0 || i1 >= i32(u.img.y)) { continue; }
        col += x[xb + (u32(i0) * u.img.y + u32(i1)) * u.img.z + u32(i2)];
        inside = true;
      }
    }
    s += col;
  }
  y[i] = select(0.0, s / f32(pool_divisor(st)), inside);
}
