// Gather along an axis: y[o, j, r] = x[o, indices[j], r] over x viewed as [outer, d, row] and
// y as [outer, ni, row], in elements of `width` 4-byte words; `half` 1: x is float16 (two to a
// word), widened to float32 as it is read. A negative index counts from the end; one outside
// [-d, d) writes `bad` (a NaN for floats: the wasm backend's error is not a GPU's to raise).
struct U {
  n: u32, gx: u32, d: u32, ni: u32,
  row: u32, width: u32, idx64: u32, half: u32,
  bad: u32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> indices: array<u32>;
@group(0) @binding(3) var<storage, read_write> y: array<u32>;

// include: index

fn index(j: u32) -> u32 {
  if (u.idx64 != 0u) { return resolve_index(indices[2u * j], indices[2u * j + 1u], true, u.d); }
  return resolve_index(indices[j], 0u, false, u.d);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;   // element of y
  if (i >= u.n) { return; }
  let r = i % u.row;
  let oj = i / u.row;
  let j = oj % u.ni;
  let o = oj / u.ni;
  let v = index(j);
  if (v >= u.d) {
    for (var w = 0u; w < u.width; w++) { y[i * u.width + w] = u.bad; }
    return;
  }
  let src = (o * u.d + v) * u.row + r;
  if (u.half != 0u) {
    let pair = unpack2x16float(x[src / 2u]);
    y[i] = bitcast<u32>(select(pair.x, pair.y, (src & 1u) != 0u));
    return;
  }
  for (var w = 0u; w < u.width; w++) { y[i * u.width + w] = x[src * u.width + w]; }
}
