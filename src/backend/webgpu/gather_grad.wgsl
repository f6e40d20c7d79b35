// GatherGrad: dx[o, v, r] = the sum of dy[o, j, r] over the positions j whose index is v, added
// in order of j from zero (as the wasm backend adds them: the same bits). No float atomics: the
// positions are sorted by index first, by counting, and each output element adds its own run.
//   mode 0: zero the counts and cursors (a thread per row v of d)
//   mode 1: count each row's positions (integer atomics: the counts are exact)
//   mode 2: the rows' offsets, an exclusive prefix sum of the counts (one workgroup)
//   mode 3: place each position in its row's run (in any order)
//   mode 4: sort each run by position (a thread per row)
//   mode 5: the sums (a thread per element of dx)
// scratch holds counts[d], cursors[d], offsets[d]; runs holds ni positions. A position whose
// index is outside [-d, d) adds to no row (the wasm backend's error is not a GPU's to raise).
struct U {
  n: u32, gx: u32, mode: u32, d: u32,
  ni: u32, row: u32, idx64: u32, pad: u32,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> indices: array<u32>;
@group(0) @binding(2) var<storage, read_write> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> scratch: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> runs: array<u32>;
@group(0) @binding(5) var<storage, read_write> dx: array<f32>;

var<workgroup> part: array<u32, 256>;

// include: index

fn index(j: u32) -> u32 {
  if (u.idx64 != 0u) { return resolve_index(indices[2u * j], indices[2u * j + 1u], true, u.d); }
  return resolve_index(indices[j], 0u, false, u.d);
}

fn scan(li: u32) {
  let per = (u.d + 255u) / 256u;
  let lo = min(li * per, u.d);
  let hi = min(lo + per, u.d);
  var s = 0u;
  for (var v = lo; v < hi; v++) { s += atomicLoad(&scratch[v]); }
  part[li] = s;
  workgroupBarrier();
  if (li == 0u) {
    var run = 0u;
    for (var k = 0u; k < 256u; k++) {
      let c = part[k];
      part[k] = run;
      run += c;
    }
  }
  workgroupBarrier();
  var off = part[li];
  for (var v = lo; v < hi; v++) {
    atomicStore(&scratch[2u * u.d + v], off);
    off += atomicLoad(&scratch[v]);
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  if (u.mode == 2u) {
    scan(li);
    return;
  }
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.n) { return; }
  switch u.mode {
    case 0u: {
      atomicStore(&scratch[i], 0u);
      atomicStore(&scratch[u.d + i], 0u);
    }
    case 1u: {
      let v = index(i);
      if (v < u.d) { atomicAdd(&scratch[v], 1u); }
    }
    case 3u: {
      let v = index(i);
      if (v < u.d) { runs[atomicLoad(&scratch[2u * u.d + v]) + atomicAdd(&scratch[u.d + v], 1u)] = i; }
    }
    case 4u: {
      let start = atomicLoad(&scratch[2u * u.d + i]);
      let end = start + atomicLoad(&scratch[i]);
      for (var p = start + 1u; p < end; p++) {
        let key = runs[p];
        var q = p;
        while (q > start && runs[q - 1u] > key) {
          runs[q] = runs[q - 1u];
          q -= 1u;
        }
        runs[q] = key;
      }
    }
    default: {
      let r = i % u.row;
      let ov = i / u.row;
      let v = ov % u.d;
      let o = ov / u.d;
      let start = atomicLoad(&scratch[2u * u.d + v]);
      let end = start + atomicLoad(&scratch[v]);
      var s = 0.0;
      for (var p = start; p < end; p++) { s += dy[(o * u.ni + runs[p]) * u.row + r]; }
      dx[i] = s;
    }
  }
}
