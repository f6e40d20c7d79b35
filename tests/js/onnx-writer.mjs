// A small ONNX model writer for tests that need one-node (or few-node) models: inputs and
// outputs of any dtype, float32 / int32 / int64 / float16 (Uint16Array) initializers, int /
// float / ints / string attributes; and a model's bytes with more graph outputs. Not a test
// file itself.
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
  if (typeof v === 'string') return [...str(1, name), ...str(4, v), ...int(20, 3)];
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
  const dtype = data instanceof Float32Array ? 1 : data instanceof BigInt64Array ? 7 : data instanceof Int32Array ? 6 : data instanceof Uint16Array ? 10 : 0;
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

/** The top-level fields of a protobuf message: [{ field, wire, start, end }] (end: past the field). */
function fields(b) {
  const out = [];
  let at = 0;
  const read = () => {
    let v = 0n, shift = 0n, byte;
    do {
      byte = b[at++];
      v |= BigInt(byte & 0x7f) << shift;
      shift += 7n;
    } while (byte & 0x80);
    return v;
  };
  while (at < b.length) {
    const start = at;
    const key = Number(read());
    const wire = key & 7;
    if (wire === 0) read();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const n = Number(read()); // read first: it moves `at`
      at += n;
    }
    else throw new Error(`onnx-writer: wire type ${wire} at ${start}`);
    out.push({ field: key >> 3, wire, start, end: at });
  }
  return out;
}

/** model (ONNX bytes) with float32 graph outputs `names` added (values the graph computes). */
export function withOutputs(model, names) {
  const g = fields(model).find((f) => f.field === 7);
  const field = model.subarray(g.start, g.end);
  const graph = field.subarray(headerLength(field));
  const added = names.flatMap((n) => len(12, valueInfo({ name: n })));
  return Uint8Array.from([...model.subarray(0, g.start), ...len(7, [...graph, ...added]), ...model.subarray(g.end)]);
}

/** Bytes of a length-delimited field's key and length (before its payload). */
function headerLength(field) {
  let at = 0;
  while (field[at++] & 0x80);
  while (field[at++] & 0x80);
  return at;
}
