// Dropout and its gradient, four elements a thread (a bool mask is a byte an element, four to a
// word: one thread writes one word).
//   mode 0: y = keep ? x * scale : 0, keep when the top 24 bits of splitmix64(key + i), as a
//           fraction of 2^24, are at least the ratio (ops/exec.h: the CPU's draw, bit for bit)
//   mode 1: y = x, the mask all kept (not training, or ratio 0)
//   mode 2: the gradient: dx = mask ? dy * scale : 0 (x = dy, mask = the forward's bool mask)
//   mode 3: the gradient when nothing was dropped: dx = dy
// The key (words 4, 5) is written by each run (a draw of the session's counter).
struct U {
  n: u32, gx: u32, mode: u32, mask_kind: u32,   // mask_kind: 0 none, 1 bool, 2 float
  key: vec2u, seed: vec2u,                      // low word first
  ratio: f32, scale: f32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> mask: array<u32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

// 64-bit arithmetic on (low, high) words
fn add64(a: vec2u, b: vec2u) -> vec2u {
  let lo = a.x + b.x;
  return vec2u(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn shr64(a: vec2u, k: u32) -> vec2u { return vec2u((a.x >> k) | (a.y << (32u - k)), a.y >> k); }  // 0 < k < 32
fn mul32(x: u32, y: u32) -> vec2u {
  let x0 = x & 0xffffu; let x1 = x >> 16u;
  let y0 = y & 0xffffu; let y1 = y >> 16u;
  let p00 = x0 * y0; let p01 = x0 * y1; let p10 = x1 * y0; let p11 = x1 * y1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2u((p00 & 0xffffu) | (mid << 16u), p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}
fn mul64(a: vec2u, b: vec2u) -> vec2u {
  let p = mul32(a.x, b.x);
  return vec2u(p.x, p.y + a.x * b.y + a.y * b.x);
}
fn splitmix64(v: vec2u) -> vec2u {
  var z = add64(v, vec2u(0x7f4a7c15u, 0x9e3779b9u));
  z = mul64(z ^ shr64(z, 30u), vec2u(0x1ce4e5b9u, 0xbf58476du));
  z = mul64(z ^ shr64(z, 27u), vec2u(0x133111ebu, 0x94d049bbu));
  return z ^ shr64(z, 31u);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let t = (wg.y * u.gx + wg.x) * 256u + li;
  if (t * 4u >= u.n) { return; }
  var bits = 0u;
  for (var e = 0u; e < 4u; e++) {
    let i = t * 4u + e;
    if (i >= u.n) { break; }
    var keep = true;
    switch u.mode {
      case 0u: {
        let h = splitmix64(add64(u.key, vec2u(i, 0u)));
        keep = f32(h.y >> 8u) * (1.0 / 16777216.0) >= u.ratio;
        y[i] = select(0.0, x[i] * u.scale, keep);
      }
      case 2u: {
        keep = ((mask[i / 4u] >> (8u * (i % 4u))) & 0xffu) != 0u;
        y[i] = select(0.0, x[i] * u.scale, keep);
      }
      default: { y[i] = x[i]; }
    }
    if (u.mask_kind == 2u) { mask[i] = bitcast<u32>(select(0.0, 1.0, keep)); }
    bits |= select(0u, 1u, keep) << (8u * e);
  }
  if (u.mask_kind == 1u) { mask[t] = bits; }
}
