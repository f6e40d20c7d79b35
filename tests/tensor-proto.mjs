// A test helper (not part of the package): for test runners over the ONNX backend-test layout: decode serialized TensorProto
// (.pb) files with the core's own decoder.
import { init } from '../js/core.js';
import { readTensor } from '../js/feeds.js';

export async function decodeTensorProto(bytes) {
  const core = await init();
  const m = core.m;
  const t = core.handle(core.withBytes(bytes, (p, n) => m._wtw_tensor_pb_read(p, n)), 'cannot decode TensorProto');
  try {
    const tensor = readTensor(core, { rank: m._wtw_tensor_rank, dim: (_, a) => m._wtw_tensor_dim(t, a), dtype: m._wtw_tensor_dtype, data: m._wtw_tensor_data }, t);
    return { name: core.string(m._wtw_tensor_name(t)), tensor };
  } finally {
    m._wtw_tensor_free(t);
  }
}
