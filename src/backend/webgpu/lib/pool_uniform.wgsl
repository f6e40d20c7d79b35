// The pool programs' uniform words (run_pool.c): n threads, the grid's width, mode, flags,
// planes; the window geometry (wt_gpu_geom_words), then the trailing pads.
struct U {
  n: u32, gx: u32, mode: u32, flags: u32,
  planes: u32, p0: u32, p1: u32, p2: u32,
  img: vec4u, grid: vec4u, k: vec4u, stride: vec4u, dil: vec4u, pad: vec4i, pad_end: vec4i,
}
@group(0) @binding(0) var<uniform> u: U;
