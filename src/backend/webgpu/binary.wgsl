// c = a op b with numpy broadcasting, over n output floats of rank <= 8. Strides are in
// elements, 0 along a broadcast axis. The op codes are run_binary.c's gpu_binary enum.
struct U {
  n: u32, gx: u32, op: u32, rank: u32,
  dims: array<vec4u, 2>,     // output dims, innermost last
  sa: array<vec4u, 2>,       // a's strides
  sb: array<vec4u, 2>,       // b's strides
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

fn at(v: array<vec4u, 2>, i: u32) -> u32 { return v[i / 4u][i % 4u]; }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.n) { return; }
  var rest = i;
  var ia = 0u;
  var ib = 0u;
  for (var d = 0u; d < u.rank; d++) {
    let axis = u.rank - 1u - d;
    let size = at(u.dims, axis);
    let k = rest % size;
    rest = rest / size;
    ia += k * at(u.sa, axis);
    ib += k * at(u.sb, axis);
  }
  let x = a[ia];
  let y = b[ib];
  var r: f32;
  switch u.op {
    case 0u: { r = x + y; }
    case 1u: { r = x - y; }
    case 2u: { r = x * y; }
    case 3u: { r = x / y; }
    case 4u: { r = min(x, y); }
    case 5u: { r = max(x, y); }
    default: { r = select(x, x * y, x < 0.0); } // PRelu
  }
  c[i] = r;
}
