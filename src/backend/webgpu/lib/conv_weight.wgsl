// W of the convolution programs (binding `w`): float32, or float16 pairs where flags bit 16 says
// so (a frozen weight), widened as read. Needs `// include: half` before it.
fn load_w(i: u32) -> f32 {
  let half = (u.flags & 16u) != 0u;
  return widen(w[select(i, i / 2u, half)], i, half);
}
