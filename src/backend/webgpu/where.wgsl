// y = cond ? x : z with numpy broadcasting of all three; cond is bool (one byte an element),
// x, z and y have elements of `width` 4-byte words (1: float32 / int32, 2: int64).
struct U {
  n: u32, gx: u32, rank: u32, width: u32,
  dims: array<vec4u, 2>,     // output dims, innermost last
  sc: array<vec4u, 2>,       // strides in elements, 0 along a broadcast axis
  sx: array<vec4u, 2>,
  sz: array<vec4u, 2>,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> cond: array<u32>;
@group(0) @binding(2) var<storage, read_write> x: array<u32>;
@group(0) @binding(3) var<storage, read_write> z: array<u32>;
@group(0) @binding(4) var<storage, read_write> y: array<u32>;

// include: bcast

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.n) { return; }
  let ic = bcast_offset(i, u.rank, u.dims, u.sc);
  let ix = bcast_offset(i, u.rank, u.dims, u.sx);
  let iz = bcast_offset(i, u.rank, u.dims, u.sz);
  let take = ((cond[ic / 4u] >> (8u * (ic % 4u))) & 0xffu) != 0u;
  for (var w = 0u; w < u.width; w++) {
    y[i * u.width + w] = select(z[iz * u.width + w], x[ix * u.width + w], take);
  }
}
