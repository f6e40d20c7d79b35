// float16 operands (frozen weights the plan left float16): two to a 32-bit word, the element
// at an even index in the low half. widen(word, i, half) is element i of an operand whose
// word holds it: the word itself as a float32, or its half of the pair widened.
fn widen(w: u32, i: u32, half: bool) -> f32 {
  if (!half) { return bitcast<f32>(w); }
  let pair = unpack2x16float(w);
  return select(pair.x, pair.y, (i & 1u) != 0u);
}
