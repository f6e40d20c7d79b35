// The conv programs' uniform words (run_conv.c): n threads (or workgroups), the grid's width,
// flags, group; batch, grid-side and image-side channels; the window geometry (wt_gpu_geom_words).
struct U {
  n: u32, gx: u32, flags: u32, group: u32,
  batch: u32, gch: u32, ich: u32, pad_: u32,
  img: vec4u, grid: vec4u, k: vec4u, stride: vec4u, dil: vec4u, pad: vec4i,
}
@group(0) @binding(0) var<uniform> u: U;
