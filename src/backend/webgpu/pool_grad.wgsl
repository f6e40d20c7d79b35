// MaxPoolGrad / AveragePoolGrad, one thread per dX element: it visits the windows that cover
// it in output order (each axis's taps from the last, so positions rise) and gathers their dY,
// instead of scattering (no atomics; the sum order is the CPU scatter's). Max (mode 0): a
// window's dY counts where its Indices (int64, two words) name this element. Average (mode 1):
// each window's dY divided by its tap count, as pool.wgsl divides (flags 2: count_include_pad).
struct U {
  n: u32, gx: u32, mode: u32, flags: u32,
  planes: u32, p0: u32, p1: u32, p2: u32,
  img: vec4u, grid: vec4u, k: vec4u, stride: vec4u, dil: vec4u, pad: vec4i, pad_end: vec4i,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> dy: array<f32>;
@group(0) @binding(2) var<storage, read_write> ind: array<u32>;
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;

// The window along one axis whose tap k covers position p, or -1.
fn window(p: u32, k: u32, stride: u32, dil: u32, pad: i32, n: u32) -> i32 {
  let t = i32(p) + pad - i32(k * dil);
  if (t < 0 || t % i32(stride) != 0) { return -1; }
  let o = t / i32(stride);
  return select(-1, o, o < i32(n));
}

fn taps(start: i32, k: u32, dil: u32, lo: i32, hi: i32) -> u32 {
  var n = 0u;
  for (var j = 0u; j < k; j++) {
    let i = start + i32(j * dil);
    if (i >= lo && i < hi) { n++; }
  }
  return n;
}

// AveragePool's divisor of window (o0, o1, o2).
fn divisor(o0: u32, o1: u32, o2: u32) -> f32 {
  let s0 = i32(o0 * u.stride.x) - u.pad.x;
  let s1 = i32(o1 * u.stride.y) - u.pad.y;
  let s2 = i32(o2 * u.stride.z) - u.pad.z;
  if ((u.flags & 2u) != 0u) {
    return f32(taps(s0, u.k.x, u.dil.x, -u.pad.x, i32(u.img.x) + u.pad_end.x) *
               taps(s1, u.k.y, u.dil.y, -u.pad.y, i32(u.img.y) + u.pad_end.y) *
               taps(s2, u.k.z, u.dil.z, -u.pad.z, i32(u.img.z) + u.pad_end.z));
  }
  return f32(taps(s0, u.k.x, u.dil.x, 0, i32(u.img.x)) * taps(s1, u.k.y, u.dil.y, 0, i32(u.img.y)) *
             taps(s2, u.k.z, u.dil.z, 0, i32(u.img.z)));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.n) { return; }
  let G = u.grid.x * u.grid.y * u.grid.z;
  let I = u.img.x * u.img.y * u.img.z;
  let nc = i / I;
  let p = i % I;
  let p2 = p % u.img.z;
  let p1 = (p / u.img.z) % u.img.y;
  let p0 = p / (u.img.z * u.img.y);
  var s = 0.0;
  for (var a = u.k.x; a > 0u; a--) {
    let o0 = window(p0, a - 1u, u.stride.x, u.dil.x, u.pad.x, u.grid.x);
    if (o0 < 0) { continue; }
    for (var b = u.k.y; b > 0u; b--) {
      let o1 = window(p1, b - 1u, u.stride.y, u.dil.y, u.pad.y, u.grid.y);
      if (o1 < 0) { continue; }
      for (var c = u.k.z; c > 0u; c--) {
        let o2 = window(p2, c - 1u, u.stride.z, u.dil.z, u.pad.z, u.grid.z);
        if (o2 < 0) { continue; }
        let o = nc * G + (u32(o0) * u.grid.y + u32(o1)) * u.grid.z + u32(o2);
        if (u.mode == 0u) {
          if (ind[2u * o] == i && ind[2u * o + 1u] == 0u) { s += dy[o]; }
        } else {
          s += dy[o] / divisor(u32(o0), u32(o1), u32(o2));
        }
      }
    }
  }
  dx[i] = s;
}
