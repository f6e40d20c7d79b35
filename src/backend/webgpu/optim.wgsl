// The optimizer's update over n parameters p with gradients g (and AdamW's moments m, v), in
// place: the constants are the host's (backend/optim.h wt_adamw_consts; SGD: f0 = lr), in the
// CPU kernels' order of operations. A step whose loss was not finite (loss_check.wgsl's status
// 0) updates nothing.
struct U {
  n: u32, gx: u32, kind: u32, decay: u32,  // kind 0, 1: AdamW's modes; 2: SGD
  f: array<vec4f, 2>,
}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> p: array<f32>;
@group(0) @binding(2) var<storage, read_write> g: array<f32>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read> status: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * u.gx + wg.x) * 256u + li;
  if (i >= u.n || status[0] == 0u) { return; }
  let f0 = u.f[0];
  let f1 = u.f[1];
  var P = p[i];
  let G = g[i];
  if (u.kind == 2u) {
    p[i] = P - f0.x * G;
    return;
  }
  if (u.kind == 0u) {
    P = P * f0.x;
    let M = m[i] * f0.y + f0.z * G;
    let V = v[i] * f0.w + (f1.x * G) * G;
    let D = sqrt(V) / f1.z + f1.w;
    p[i] = P + (f1.y * M) / D;
    m[i] = M;
    v[i] = V;
    return;
  }
  let M = m[i] * f0.x + f0.y * G;
  let V = v[i] * f0.z + (f0.w * G) * G;
  let D = sqrt(V) + f1.y;
  P = P + (f1.x * M) / D;
  if (u.decay != 0u) { P = P + f1.z * P; }
  p[i] = P;
  m[i] = M;
  v[i] = V;
}
