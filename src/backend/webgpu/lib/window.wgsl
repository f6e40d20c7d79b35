// Sliding windows (ops/conv_geom.h: window position o reads image position o * stride - pad +
// k * dil along each axis), for programs whose U has the geometry (stride, pad: vec4).

// Position o of a 3-D-normalized extent d (its x outermost) as its three coordinates.
fn coords3(o: u32, d: vec4u) -> vec3u {
  return vec3u(o / (d.z * d.y), (o / d.z) % d.y, o % d.z);
}

// Where the window at grid coordinates q starts in the image (may be negative: the padding).
fn window_start(q: vec3u) -> vec3i {
  return vec3i(q * u.stride.xyz) - u.pad.xyz;
}

// The window position whose tap k reaches image position p, or -1. (Stride 1 skips the
// division: integer division is dear on some adapters.)
fn window_of(p: u32, k: u32, stride: u32, dil: u32, pad: i32, n: u32) -> i32 {
  let t = i32(p) + pad - i32(k * dil);
  if (t < 0) { return -1; }
  var o = t;
  if (stride != 1u) {
    if (t % i32(stride) != 0) { return -1; }
    o = t / i32(stride);
  }
  return select(-1, o, o < i32(n));
}

// Taps of a window of k starting at `start` that lie inside [lo, hi).
fn window_taps(start: i32, k: u32, dil: u32, lo: i32, hi: i32) -> u32 {
  var n = 0u;
  for (var j = 0u; j < k; j++) {
    let i = start + i32(j * dil);
    if (i >= lo && i < hi) { n++; }
  }
  return n;
}
