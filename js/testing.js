// Helpers for test runners over the ONNX backend-test layout: decode serialized TensorProto
// (.pb) files with the core's own decoder.
import { init } from './core.js';
import { Tensor } from './tensor.js';

export async function decodeTensorProto(bytes) {
  const core = await init();
  const m = core.m;
  const p = core.copyIn(bytes);
  try {
    const t = core.handle(m._wtw_tensor_pb_read(p, bytes.byteLength), 'cannot decode TensorProto');
    try {
      const rank = m._wtw_tensor_rank(t);
      const dims = Array.from({ length: rank }, (_, a) => m._wtw_tensor_dim(t, a));
      const tensor = Tensor.fromHeap(core.heap, m._wtw_tensor_dtype(t), m._wtw_tensor_data(t), dims);
      return { name: core.string(m._wtw_tensor_name(t)), tensor };
    } finally {
      m._wtw_tensor_free(t);
    }
  } finally {
    core.free(p);
  }
}
