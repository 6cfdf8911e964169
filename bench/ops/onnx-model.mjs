// One-node ONNX models built in code, for running the same op in onnxruntime. A minimal protobuf
// writer for the few ModelProto fields needed; field numbers are those of onnx/onnx.proto.
const FLOAT = 1, INT32 = 6, INT64 = 7, BOOL = 9;  // TensorProto.DataType
const ATTR_FLOAT = 1, ATTR_INT = 2;            // AttributeProto.AttributeType

function varint(n) {
  const out = [];
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v) byte |= 0x80;
    out.push(byte);
  } while (v);
  return out;
}
const key = (field, wire) => varint((field << 3) | wire);
const int = (field, n) => [...key(field, 0), ...varint(n)];
const bytes = (field, b) => [...key(field, 2), ...varint(b.length), ...b];
const str = (field, s) => bytes(field, [...new TextEncoder().encode(s)]);
const float = (field, f) => [...key(field, 5), ...new Uint8Array(Float32Array.of(f).buffer)];

function attribute(name, value) {
  return Number.isInteger(value) && !Object.is(value, -0) && typeof value === 'number' && !`${value}`.includes('.')
    ? [...str(1, name), ...int(3, value), ...int(20, ATTR_INT)]
    : [...str(1, name), ...float(2, value), ...int(20, ATTR_FLOAT)];
}

function valueInfo(name, elemType, dims) {
  const shape = dims.flatMap((d) => bytes(1, int(1, d)));
  const tensorType = [...int(1, elemType), ...bytes(2, shape)];
  return [...str(1, name), ...bytes(2, bytes(1, tensorType))];
}

/**
 * A model with one node. inputs/outputs: [{ name, type: 'float32' | 'int32' | 'int64' | 'bool', dims }] in
 * the node's order ('' names are omitted optional slots); attrs: { name: number } (integers are INT);
 * domain: the operator's domain ('' for ONNX's own, 'com.microsoft' for onnxruntime's contrib ops).
 */
export function oneNodeModel({ opType, opset, inputs, outputs, attrs = {}, floatAttrs = [], domain = '' }) {
  const elem = { float32: FLOAT, int32: INT32, int64: INT64, bool: BOOL };
  const node = [
    ...inputs.flatMap((i) => str(1, i.name)),
    ...outputs.flatMap((o) => str(2, o.name)),
    ...str(3, `${opType}_0`),
    ...str(4, opType),
    ...Object.entries(attrs).flatMap(([k, v]) => bytes(5, floatAttrs.includes(k)
      ? [...str(1, k), ...float(2, v), ...int(20, ATTR_FLOAT)] : attribute(k, v))),
    ...(domain ? str(7, domain) : []),
  ];
  const graph = [
    ...bytes(1, node),
    ...str(2, `posenc_bench_${opType}`),
    ...inputs.filter((i) => i.name).flatMap((i) => bytes(11, valueInfo(i.name, elem[i.type], i.dims))),
    ...outputs.filter((o) => o.name).flatMap((o) => bytes(12, valueInfo(o.name, elem[o.type], o.dims))),
  ];
  const model = [
    ...int(1, 11),                               // ir_version 11 (ONNX 1.18+, opset 23/24)
    ...str(2, 'posenc-bench'),
    ...bytes(7, graph),
    ...bytes(8, [...str(1, ''), ...int(2, opset)]),
    ...(domain ? bytes(8, [...str(1, domain), ...int(2, 1)]) : []),
  ];
  return Uint8Array.from(model);
}
