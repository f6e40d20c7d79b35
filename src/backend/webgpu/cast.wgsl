// Cast between float32, int32, int64 (two words, low first) and bool (a byte, four to a word:
// a thread per output word then, so no two threads write one word). As the wasm backend
// converts: float to int truncates toward zero and saturates; int64 to float32 rounds once for
// |v| < 2^31 (beyond, the high and low halves each round); to bool, nonzero.
struct U { n: u32, gx: u32, src: u32, dst: u32 }   // kinds: 0 float32, 1 int32, 2 int64, 3 bool
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<u32>;

fn as_f32(i: u32) -> f32 {
  switch u.src {
    case 0u: { return bitcast<f32>(x[i]); }
    case 1u: { return f32(bitcast<i32>(x[i])); }
    case 2u: {
      let lo = x[2u * i];
      let hi = bitcast<i32>(x[2u * i + 1u]);
      if (hi == select(0, -1, (lo & 0x80000000u) != 0u)) { return f32(bitcast<i32>(lo)); }
      return f32(hi) * 4294967296.0 + f32(lo);
    }
    default: { return f32((x[i / 4u] >> (8u * (i % 4u))) & 0xffu); }
  }
}

fn nonzero(i: u32) -> bool {
  switch u.src {
    case 0u: { return bitcast<f32>(x[i]) != 0.0; }
    case 1u: { return x[i] != 0u; }
    case 2u: { return (x[2u * i] | x[2u * i + 1u]) != 0u; }
    default: { return ((x[i / 4u] >> (8u * (i % 4u))) & 0xffu) != 0u; }
  }
}

// float to int64, (low, high): truncated toward zero, saturated (t and its halves are exact:
// a float at or past 2^31 is a whole number, and dividing by 2^32 only moves its exponent)
fn f32_to_i64(v: f32) -> vec2u {
  if (abs(v) < 2147483648.0) {
    let i = i32(v);
    return vec2u(bitcast<u32>(i), select(0u, 0xffffffffu, i < 0));
  }
  if (v >= 9223372036854775808.0) { return vec2u(0xffffffffu, 0x7fffffffu); }
  if (v <= -9223372036854775808.0) { return vec2u(0u, 0x80000000u); }
  let hi = floor(v / 4294967296.0);
  return vec2u(u32(v - hi * 4294967296.0), bitcast<u32>(i32(hi)));
}

// element i as an int64, (low, high)
fn as_i64(i: u32) -> vec2u {
  switch u.src {
    case 0u: { return f32_to_i64(bitcast<f32>(x[i])); }
    case 1u: { return vec2u(x[i], select(0u, 0xffffffffu, bitcast<i32>(x[i]) < 0)); }
    case 2u: { return vec2u(x[2u * i], x[2u * i + 1u]); }
    default: { return vec2u(select(0u, 1u, nonzero(i)), 0u); }
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let t = (wg.y * u.gx + wg.x) * 256u + li;
  if (u.dst == 3u) {
    if (t * 4u >= u.n) { return; }
    var word = 0u;
    for (var e = 0u; e < 4u && t * 4u + e < u.n; e++) { word |= select(0u, 1u, nonzero(t * 4u + e)) << (8u * e); }
    y[t] = word;
    return;
  }
  if (t >= u.n) { return; }
  switch u.dst {
    case 0u: { y[t] = bitcast<u32>(as_f32(t)); }
    case 1u: {
      // float saturates to int32; int64 keeps its low word (as C converts)
      // (WGSL's i32() clamps to the largest float below 2^31: saturate to INT32_MAX here)
      let v = bitcast<f32>(x[t]);
      if (u.src != 0u) { y[t] = as_i64(t).x; } else if (v >= 2147483648.0) { y[t] = 0x7fffffffu; } else { y[t] = bitcast<u32>(i32(v)); }
    }
    default: {
      let v = as_i64(t);
      y[2u * t] = v.x;
      y[2u * t + 1u] = v.y;
    }
  }
}
