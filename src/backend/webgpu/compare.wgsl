// c = a cmp b with numpy broadcasting into a bool output (one byte an element, four to a u32
// word: each thread writes one whole word, so no two threads write one word). a and b are
// float32, int32 or int64 (two words an element, low first; compared as signed 64-bit), or bool
// (kind 3: a byte an element) for the logic ops And, Or, Xor and Not (ops 5-8; Not reads a only).
struct U {
  n: u32, gx: u32, op: u32, rank: u32,
  dims: array<vec4u, 2>,     // output dims, innermost last
  sa: array<vec4u, 2>,       // a's strides in elements, 0 along a broadcast axis
  sb: array<vec4u, 2>,
  kind: u32,                 // 0 float32, 1 int32, 2 int64, 3 bool
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> a: array<u32>;
@group(0) @binding(2) var<storage, read_write> b: array<u32>;
@group(0) @binding(3) var<storage, read_write> c: array<u32>;

// include: bcast

// -1, 0 or 1 as x <, ==, > y (NaN: 2, unordered: every comparison but != is false)
fn order(ia: u32, ib: u32) -> i32 {
  if (u.kind == 0u) {
    let x = bitcast<f32>(a[ia]);
    let y = bitcast<f32>(b[ib]);
    if (x < y) { return -1; }
    if (x > y) { return 1; }
    return select(2, 0, x == y);
  }
  if (u.kind == 1u) {
    let x = bitcast<i32>(a[ia]);
    let y = bitcast<i32>(b[ib]);
    return select(select(0, 1, x > y), -1, x < y);
  }
  let xh = bitcast<i32>(a[2u * ia + 1u]);
  let yh = bitcast<i32>(b[2u * ib + 1u]);
  if (xh != yh) { return select(1, -1, xh < yh); }
  let xl = a[2u * ia];
  let yl = b[2u * ib];
  return select(select(0, 1, xl > yl), -1, xl < yl);
}

fn test_(o: i32) -> bool {
  switch u.op {
    case 0u: { return o == 0; }              // Equal
    case 1u: { return o == -1; }             // Less
    case 2u: { return o == 1; }              // Greater
    case 3u: { return o == -1 || o == 0; }   // LessOrEqual
    default: { return o == 1 || o == 0; }    // GreaterOrEqual
  }
}

fn logic(ia: u32, ib: u32) -> bool {
  let x = ((a[ia / 4u] >> (8u * (ia % 4u))) & 0xffu) != 0u;
  let y = ((b[ib / 4u] >> (8u * (ib % 4u))) & 0xffu) != 0u;  // (Not: b is a placeholder)
  switch u.op {
    case 5u: { return x && y; }    // And
    case 6u: { return x || y; }    // Or
    case 7u: { return x != y; }    // Xor
    default: { return !x; }        // Not
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let w = (wg.y * u.gx + wg.x) * 256u + li;
  if (w * 4u >= u.n) { return; }
  var word = 0u;
  for (var e = 0u; e < 4u; e++) {
    let i = w * 4u + e;
    if (i >= u.n) { break; }
    let ia = bcast_offset(i, u.rank, u.dims, u.sa);
    let ib = bcast_offset(i, u.rank, u.dims, u.sb);
    let r = select(test_(order(ia, ib)), logic(ia, ib), u.kind == 3u);
    word |= select(0u, 1u, r) << (8u * e);
  }
  c[w] = word;
}
