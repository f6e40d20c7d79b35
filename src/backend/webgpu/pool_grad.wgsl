// MaxPoolGrad / AveragePoolGrad, one thread per dX element: it visits the windows that cover
// it in output order (each axis's taps from the last, so positions rise) and gathers their dY,
// instead of scattering (no atomics; the sum order is the CPU scatter's). Max (mode 0): a
// window's dY counts where its Indices (int64, two words) name this element. Average (mode 1):
// each window's dY divided by its tap count, as pool.wgsl divides (flags 2: count_include_pad).
// include: pool_uniform
@group(0) @binding(1) var<storage, read_write> dy: array<f32>;
@group(0) @binding(2) var<storage, read_write> ind: array<u32>;
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;

// include: window
// include: pool_divisor

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.n) { return; }
  let G = u.grid.x * u.grid.y * u.grid.z;
  let I = u.img.x * u.img.y * u.img.z;
  let nc = i / I;
  let p = i % I;
  let q = coords3(p, u.img);
  var s = 0.0;
  for (var a = u.k.x; a > 0u; a--) {
    let o0 = window_of(q.x, a - 1u, u.stride.x, u.dil.x, u.pad.x, u.grid.x);
    if (o0 < 0) { continue; }
    for (var b = u.k.y; b > 0u; b--) {
      let o1 = window_of(q.y, b - 1u, u.stride.y, u.dil.y, u.pad.y, u.grid.y);
      if (o1 < 0) { continue; }
      for (var c = u.k.z; c > 0u; c--) {
        let o2 = window_of(q.z, c - 1u, u.stride.z, u.dil.z, u.pad.z, u.grid.z);
        if (o2 < 0) { continue; }
        let o = nc * G + (u32(o0) * u.grid.y + u32(o1)) * u.grid.z + u32(o2);
        if (u.mode == 0u) {
          if (ind[2u * o] == i && ind[2u * o + 1u] == 0u) { s += dy[o]; }
        } else {
          s += dy[o] / f32(pool_divisor(window_start(vec3u(u32(o0), u32(o1), u32(o2)))));
        }
      }
    }
  }
  dx[i] = s;
}
