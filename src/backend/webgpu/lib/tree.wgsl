// A sum over a 64-thread workgroup: each thread's v (a share it added in a fixed order), added
// in a fixed tree order in workgroup memory (the same bits run to run). Call from uniform
// control flow with every thread of the workgroup.
var<workgroup> tree_part: array<f32, 64>;

fn tree_sum(li: u32, v: f32) -> f32 {
  tree_part[li] = v;
  workgroupBarrier();
  for (var h = 32u; h > 0u; h = h >> 1u) {
    if (li < h) { tree_part[li] += tree_part[li + h]; }
    workgroupBarrier();
  }
  let t = tree_part[0];
  workgroupBarrier();
  return t;
}
