// Broadcast indexing shared by the elementwise programs: dims and strides are 8 u32 words in two
// vec4u (uniform arrays must have 16-byte elements), innermost axis last.

fn at(v: array<vec4u, 2>, i: u32) -> u32 { return v[i / 4u][i % 4u]; }

// the element offset that output element i reads through strides s (0 along a broadcast axis)
fn bcast_offset(i: u32, rank: u32, dims: array<vec4u, 2>, s: array<vec4u, 2>) -> u32 {
  var rest = i;
  var off = 0u;
  for (var d = 0u; d < rank; d++) {
    let axis = rank - 1u - d;
    let size = at(dims, axis);
    off += (rest % size) * at(s, axis);
    rest = rest / size;
  }
  return off;
}
