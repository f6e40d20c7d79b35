// AveragePool's divisor of the window starting at st: its taps inside the input, or
// inside the padded extent with flags 2 (count_include_pad). For the pool programs (their U
// has the window geometry, pad_end and flags); uses lib/window.wgsl.
fn pool_divisor(st: vec3i) -> u32 {
  if ((u.flags & 2u) != 0u) {
    return window_taps(st.x, u.k.x, u.dil.x, -u.pad.x, i32(u.img.x) + u.pad_end.x) *
           window_taps(st.y, u.k.y, u.dil.y, -u.pad.y, i32(u.img.y) + u.pad_end.y) *
           window_taps(st.z, u.k.z, u.dil.z, -u.pad.z, i32(u.img.z) + u.pad_end.z);
  }
  return window_taps(st.x, u.k.x, u.dil.x, 0, i32(u.img.x)) * window_taps(st.y, u.k.y, u.dil.y, 0, i32(u.img.y)) *
         window_taps(st.z, u.k.z, u.dil.z, 0, i32(u.img.z));
}
