// LayerNormalizationGrad over rows of n (mean and inv_std per row from the forward), with
// xh = (x - mean) inv_std and gs = dy scale:
//   mode 0, one workgroup per row: a = sum gs, b = sum gs xh (fixed strided shares and a
//     fixed-order tree reduction), dX = (gs - a / n - xh b / n) inv_std
//   mode 1, one thread per column j: dScale[j] = sum over rows of dy xh, dBias[j] = sum of dy,
//     rows in order
// flags: 1 dX, 2 dScale, 4 dBias wanted.
struct U { rows: u32, gx: u32, n: u32, mode: u32, flags: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> dy: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> scale: array<f32>;
@group(0) @binding(4) var<storage, read_write> mean: array<f32>;
@group(0) @binding(5) var<storage, read_write> inv_std: array<f32>;
@group(0) @binding(6) var<storage, read_write> dx: array<f32>;
@group(0) @binding(7) var<storage, read_write> dscale: array<f32>;
@group(0) @binding(8) var<storage, read_write> dbias: array<f32>;

// include: tree

fn columns(j: u32) {
  if (j >= u.n) { return; }
  var ss = 0.0;
  var sb = 0.0;
  for (var r = 0u; r < u.rows; r++) {
    let g = dy[r * u.n + j];
    ss = fma(g, (x[r * u.n + j] - mean[r]) * inv_std[r], ss);
    sb += g;
  }
  if ((u.flags & 2u) != 0u) { dscale[j] = ss; }
  if ((u.flags & 4u) != 0u) { dbias[j] = sb; }
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let w = wg.y * u.gx + wg.x;
  if (u.mode == 1u) {
    columns(w * 64u + li);
    return;
  }
  if (w >= u.rows) { return; }
  let base = w * u.n;
  let mu = mean[w];
  let inv = inv_std[w];
  var sa = 0.0;
  var sb = 0.0;
  for (var j = li; j < u.n; j += 64u) {
    let gs = dy[base + j] * scale[j];
    sa += gs;
    sb = fma(gs, (x[base + j] - mu) * inv, sb);
  }
  let a = tree_sum(li, sa);
  let b = tree_sum(li, sb);
  let ma = select(0.0, a / f32(u.n), u.n > 0u);
  let mb = select(0.0, b / f32(u.n), u.n > 0u);
  for (var j = li; j < u.n; j += 64u) {
    let xh = (x[base + j] - mu) * inv;
    dx[base + j] = (dy[base + j] * scale[j] - ma - xh * mb) * inv;
  }
}
