// InPlaceAccumulatorV2: buffer = value where the overwrite flag is set, else buffer + value,
// in place; `updated` is set true.
struct U { n: u32, gx: u32, has_flag: u32, pad: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> buffer: array<f32>;
@group(0) @binding(2) var<storage, read_write> value: array<f32>;
@group(0) @binding(3) var<storage, read_write> flag: array<u32>;     // a bool, in its first byte
@group(0) @binding(4) var<storage, read_write> updated: array<u32>;  // a bool, in its first byte

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i == 0u) { updated[0] = 1u; }
  if (i >= u.n) { return; }
  let overwrite = u.has_flag != 0u && (flag[0] & 0xffu) != 0u;
  buffer[i] = select(buffer[i] + value[i], value[i], overwrite);
}
