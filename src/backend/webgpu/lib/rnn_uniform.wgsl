// The uniform words of the recurrent programs (run_rnn.c's set_sizes): the sizes, the
// direction, the program's flags and two offsets into its scratch (each program says which).
struct U {
  S: u32, B: u32, H: u32, D: u32,
  reverse: u32, flags: u32, off: u32, off2: u32,
}
@group(0) @binding(0) var<uniform> u: U;

// Whether direction d runs over the sequence from its end: the second of two, or the one when
// the op says reverse.
fn backwards(d: u32) -> bool { return select(u.reverse != 0u, d == 1u, u.D == 2u); }
