// A small ONNX model writer for tests that need one-node (or few-node) models: float32 inputs,
// initializers and outputs, int / float / ints attributes. Not a test file itself.
const varint = (v) => {
  let n = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do {
    let b = Number(n & 0x7fn);
    n >>= 7n;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const len = (field, bytes) => [...varint((field << 3) | 2), ...varint(bytes.length), ...bytes];
const int = (field, v) => [...varint(field << 3), ...varint(v)];
const str = (field, s) => len(field, [...new TextEncoder().encode(s)]);
const f32 = (field, v) => [...varint((field << 3) | 5), ...new Uint8Array(Float32Array.of(v).buffer)];

function attribute(name, v) {
  if (Array.isArray(v)) return [...str(1, name), ...v.flatMap((x) => int(8, x)), ...int(20, 7)];
  if (Number.isInteger(v) && !(typeof v === 'object')) return [...str(1, name), ...int(3, v), ...int(20, 2)];
  return [...str(1, name), ...f32(2, v.float ?? v), ...int(20, 1)];
}

function valueInfo({ name, dims, dtype = 1 }) {
  const shape = dims ? len(2, dims.flatMap((d) => len(1, typeof d === 'string' ? str(2, d) : int(1, d)))) : [];
  return [...str(1, name), ...len(2, len(1, [...int(1, dtype), ...shape]))];
}

function tensor({ name, dims, data }) {
  const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const dtype = data instanceof Float32Array ? 1 : data instanceof BigInt64Array ? 7 : data instanceof Int32Array ? 6 : 0;
  return [...dims.flatMap((d) => int(1, d)), ...int(2, dtype), ...str(8, name), ...len(9, [...raw])];
}

/**
 * { nodes: [{ op, inputs, outputs, attrs?, domain? }], inputs: [{ name, dims, dtype? }],
 * outputs: [{ name, dtype? }], initializers?: [{ name, dims, data }], opset? } -> ONNX bytes.
 * A float attribute that is a whole number is written { float: v }.
 */
export function onnxModel({ nodes, inputs, outputs, initializers = [], opset = 17 }) {
  const graph = [
    ...nodes.flatMap((n, i) =>
      len(1, [
        ...n.inputs.flatMap((x) => str(1, x)),
        ...n.outputs.flatMap((y) => str(2, y)),
        ...str(3, `${n.op.toLowerCase()}_${i}`),
        ...str(4, n.op),
        ...Object.entries(n.attrs ?? {}).flatMap(([k, v]) => len(5, attribute(k, v))),
        ...(n.domain ? str(7, n.domain) : []),
      ]),
    ),
    ...str(2, 'g'),
    ...initializers.flatMap((t) => len(5, tensor(t))),
    ...inputs.flatMap((v) => len(11, valueInfo(v))),
    ...outputs.flatMap((v) => len(12, valueInfo(v))),
  ];
  const domains = [...new Set(nodes.map((n) => n.domain ?? ''))];
  return Uint8Array.from([
    ...int(1, 8),
    ...domains.flatMap((d) => len(8, [...str(1, d), ...int(2, d ? 1 : opset)])),
    ...len(7, graph),
  ]);
}
