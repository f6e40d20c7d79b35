// A strided copy: y[yoff + sum k ys] = x[xoff + sum k xs] over the coordinates k of `dims`
// (offsets and strides in elements of `width` 4-byte words; a stride may be negative, in two's
// complement: u32 arithmetic wraps). Slice, SliceGrad, Concat and Split are each one or a few.
// mode 1 instead fills y's first n elements with zeros. width 0: elements of one byte (bool),
// read at x's offsets and written whole words at a time, so y must be dense from element 0 (a
// thread writes the word of four consecutive elements).
struct U {
  n: u32, gx: u32, rank: u32, width: u32,
  xoff: u32, yoff: u32, mode: u32, pad: u32,
  dims: array<vec4u, 2>,
  xs: array<vec4u, 2>,
  ys: array<vec4u, 2>,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<u32>;

// include: bcast

fn source(i: u32) -> u32 {
  var rest = i;
  var ix = u.xoff;
  for (var d = 0u; d < u.rank; d++) {
    let axis = u.rank - 1u - d;
    let size = at(u.dims, axis);
    ix += (rest % size) * at(u.xs, axis);
    rest = rest / size;
  }
  return ix;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (u.width == 0u) {
    if (i * 4u >= u.n) { return; }
    var word = 0u;
    for (var e = 0u; e < 4u && i * 4u + e < u.n; e++) {
      let ix = source(i * 4u + e);
      word |= ((x[ix / 4u] >> (8u * (ix % 4u))) & 0xffu) << (8u * e);
    }
    y[i] = word;
    return;
  }
  if (i >= u.n) { return; }
  if (u.mode == 1u) {
    for (var w = 0u; w < u.width; w++) { y[i * u.width + w] = 0u; }
    return;
  }
  let ix = source(i);
  let iy = u.yoff + bcast_offset(i, u.rank, u.dims, u.ys);
  for (var w = 0u; w < u.width; w++) { y[iy * u.width + w] = x[ix * u.width + w]; }
}
