// An index of an int32 or int64 tensor (lo, hi: its words; an int32's hi is unused) resolved
// into [0, d): a negative one counts from the end; d when it is outside [-d, d).
fn resolve_index(lo: u32, hi: u32, wide: bool, d: u32) -> u32 {
  // an int64 fits 32 bits when its high word is the low word's sign
  if (wide && hi != select(0u, 0xffffffffu, (lo & 0x80000000u) != 0u)) { return d; }
  let v = bitcast<i32>(lo);
  if (v < 0) {
    let w = i32(d) + v;
    return select(d, u32(w), w >= 0);
  }
  return select(d, u32(v), u32(v) < d);
}
