// ONNX operators with their exact semantics (cpp/src/onnx.cpp): tensors { data, dims } keyed by
// slot, attributes by ONNX name. An onnxruntime-web Tensor works as is.
import {
  MAX_ELEMENTS, PosencRangeError, PosencTypeError, checkElements, checkInt, checkNumber,
  checkOptions, checkOut, describe, isPlainObject, jsMessageWith
} from './checks.js';
import { halfBits, halfLike, isTfTensor, wrapperOf } from './tensor.js';

// ---- tensors (ONNX ops) ----------------------------------------------------------------------------

const ATTENTION_INPUTS = ['Q', 'K', 'V', 'attn_mask', 'past_key', 'past_value', 'nonpad_kv_seqlen'];
const ATTENTION_OUTPUTS = ['Y', 'present_key', 'present_value', 'qk_matmul_output'];
const ATTENTION_ATTRS = ['is_causal', 'kv_num_heads', 'q_num_heads', 'qk_matmul_output_mode', 'scale', 'softcap',
  'softmax_precision'];
const ROTARY_INPUTS = ['X', 'cos_cache', 'sin_cache', 'position_ids'];
const ROTARY_OUTPUTS = ['Y'];
const ROTARY_ATTRS = ['interleaved', 'num_heads', 'rotary_embedding_dim'];
const DTYPE = { float32: 0, bool: 1, int64: 2, float16: 3 };

/**
 * Reads an ONNX-style tensor { data, dims } (an onnxruntime-web Tensor works as is) for a slot
 * whose allowed element types are `kinds` ('float32', 'float16', 'bool', 'int64'). null when absent.
 * float16 data is IEEE half bits in a Uint16Array (onnxruntime-web's 'float16' tensors).
 */
function readTensor(fn, slot, t, kinds) {
  if (t === undefined || t === null) return null;
  if (isTfTensor(t)) t = { data: t.dataSync(), dims: t.shape };
  if (typeof t !== 'object' || !('data' in t) || !('dims' in t)) {
    throw new PosencTypeError(`${fn}: inputs.${slot} must be a tensor { data, dims } (got ${describe(t)})`);
  }
  const dimsIn = t.dims;
  if (!(Array.isArray(dimsIn) || ArrayBuffer.isView(dimsIn))) {
    throw new PosencTypeError(`${fn}: inputs.${slot}.dims must be an array of integers (got ${describe(dimsIn)})`);
  }
  const dims = Array.from(dimsIn, (d) => (typeof d === 'bigint' ? Number(d) : d));
  if (dims.length < 1 || dims.length > 4) {
    throw new PosencRangeError(`${fn}: inputs.${slot}.dims must have 1 to 4 entries (got [${dims}])`);
  }
  dims.forEach((d, i) => {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0) {
      throw new PosencRangeError(`${fn}: inputs.${slot}.dims[${i}] must be an integer >= 0 (got ${describe(dimsIn[i])})`);
    }
  });
  const n = dims.reduce((a, b) => a * b, 1);
  if (n > MAX_ELEMENTS) throw new PosencRangeError(`${fn}: inputs.${slot} has ${n} elements, over the limit of ${MAX_ELEMENTS}`, 'kTooLarge');
  let data = t.data;
  let dtype;
  if (data instanceof Float32Array && kinds.includes('float32')) dtype = 'float32';
  else if (halfBits(data) && kinds.includes('float16')) dtype = 'float16';
  else if ((data instanceof Uint8Array || (Array.isArray(data) && typeof data[0] === 'boolean')) && kinds.includes('bool')) dtype = 'bool';
  else if ((data instanceof BigInt64Array || (Array.isArray(data) && data.every((x) => typeof x === 'number' || typeof x === 'bigint'))) && kinds.includes('int64')) dtype = 'int64';
  else {
    const wanted = { float32: 'Float32Array', float16: `${globalThis.Float16Array ? 'Float16Array or ' : ''}Uint16Array (float16 bits)`, bool: 'Uint8Array or boolean[]',
      int64: 'BigInt64Array or number[]' };
    throw new PosencTypeError(`${fn}: inputs.${slot}.data must be a ${kinds.map((k) => wanted[k]).join(' or ')} (got ${describe(data)})`);
  }
  if (data.length !== n) {
    throw new PosencRangeError(`${fn}: inputs.${slot}.data has ${data.length} elements but dims [${dims}] need ${n}`);
  }
  if (dtype === 'int64') {
    for (let i = 0; i < n; i++) {
      const x = data[i];
      if (typeof x === 'number' && !Number.isSafeInteger(x)) throw new PosencRangeError(`${fn}: inputs.${slot}.data[${i}] must be an integer (got ${x})`);
    }
  }
  // float16 data travels as its bits; `given` keeps the caller's array (a Float16Array's results are Float16Arrays).
  const given = data;
  if (dtype === 'float16') data = halfBits(data);
  return { slot, dtype, dims, data, given, n };
}

function readAttrs(fn, attrs, allowed) {
  if (attrs === undefined) return {};
  if (!isPlainObject(attrs)) throw new PosencTypeError(`${fn}: attrs must be an object (got ${describe(attrs)})`);
  for (const key of Object.keys(attrs)) {
    if (!allowed.includes(key)) throw new PosencTypeError(`${fn}: unknown attribute ${JSON.stringify(key)} (allowed: ${allowed.join(', ')})`);
  }
  return attrs;
}

// options.outputs: the output slots wanted, as an ONNX node lists them ('' = an omitted optional
// output); Y is always among them. undefined → dflt.
function wantedOutputs(fn, outputs, slots, dflt) {
  if (outputs === undefined) return dflt;
  if (!Array.isArray(outputs)) throw new PosencTypeError(`${fn}: outputs must be an array of output slot names (got ${describe(outputs)})`);
  const wanted = outputs.filter((o) => o !== '');
  for (const o of wanted) {
    if (!slots.includes(o)) throw new PosencRangeError(`${fn}: unknown output slot ${JSON.stringify(o)} (slots: ${slots.join(', ')})`);
  }
  if (!wanted.includes('Y')) throw new PosencRangeError(`${fn}: outputs must include Y`);
  return wanted;
}

// The int32 range integer attributes cross into C++ in (their rules, where C++ has one, are its:
// onnx_attention_attrs_check).
const INT32 = [-(2 ** 31), 2 ** 31 - 1];

function intAttr(fn, attrs, name, dflt, min, max) {
  let v = attrs[name];
  if (v === undefined) return dflt;
  if (typeof v === 'boolean') v = v ? 1 : 0;
  if (typeof v === 'bigint') v = Number(v);
  return checkInt(fn, `attrs.${name}`, v, min, max);
}

// The functions below take the context ctx = { module, heap } (onnxApi's).

// Copies tensors into the heap (all allocations first: growth detaches views) → descriptors.
function tensorsToHeap(module, alloc, tensors) {
  const placed = tensors.map((t) => {
    if (!t) return null;
    const bytes = { float32: 4, float16: 2, bool: 1, int64: 8 }[t.dtype];
    return { t, ptr: alloc(Math.max(1, t.n) * bytes) };
  });
  const out = {};
  for (const p of placed) {
    if (!p) continue;
    const { t, ptr } = p;
    if (t.dtype === 'float32') module.HEAPF32.set(t.data, ptr >> 2);
    else if (t.dtype === 'float16') module.HEAPU16.set(t.data, ptr >> 1);
    else if (t.dtype === 'bool') module.HEAPU8.set(Uint8Array.from(t.data, (x) => (x ? 1 : 0)), ptr);
    else {
      const view = new BigInt64Array(module.HEAPU8.buffer, ptr, t.n);
      for (let i = 0; i < t.n; i++) view[i] = BigInt(t.data[i]);
    }
    out[t.slot] = { ptr, dtype: DTYPE[t.dtype], dims: t.dims };
  }
  return out;
}

// onnx.attention's arguments, checked → { tensors (per ATTENTION_INPUTS slot, or null), normalized
// (the attributes as the binding takes them), wanted (the output slots), out }.
function attentionArgs({ module, heap: { status } }, fn, inputs, attrs, options) {
  if (!isPlainObject(inputs)) throw new PosencTypeError(`${fn}: inputs must be an object keyed by slot (Q, K, V, ...) (got ${describe(inputs)})`);
  for (const key of Object.keys(inputs)) {
    if (!ATTENTION_INPUTS.includes(key)) throw new PosencTypeError(`${fn}: unknown input slot ${JSON.stringify(key)} (slots: ${ATTENTION_INPUTS.join(', ')})`);
  }
  readAttrs(fn, attrs, ATTENTION_ATTRS);
  const { outputs, opset = 24, out } = checkOptions(fn, options, ['outputs', 'opset', 'out']);
  for (const slot of ['Q', 'K', 'V']) {
    if (inputs[slot] === undefined || inputs[slot] === null) throw new PosencTypeError(`${fn}: inputs.${slot} is required`);
  }
  const tensors = ATTENTION_INPUTS.map((slot) => readTensor(fn, slot, inputs[slot],
    slot === 'attn_mask' ? ['float32', 'float16', 'bool'] : slot === 'nonpad_kv_seqlen' ? ['int64'] : ['float32', 'float16']));
  const a = attrs ?? {};
  const normalized = {
    is_causal: intAttr(fn, a, 'is_causal', 0, ...INT32),
    q_num_heads: intAttr(fn, a, 'q_num_heads', 0, 1, 2 ** 30),
    kv_num_heads: intAttr(fn, a, 'kv_num_heads', 0, 1, 2 ** 30),
    qk_matmul_output_mode: intAttr(fn, a, 'qk_matmul_output_mode', 0, ...INT32),
    softmax_precision: intAttr(fn, a, 'softmax_precision', 0, ...INT32),
    scale: a.scale === undefined ? null : checkNumber(fn, 'attrs.scale', a.scale),
    softcap: a.softcap === undefined ? 0 : checkNumber(fn, 'attrs.softcap', a.softcap),
    opset: checkInt(fn, 'opset', opset, 23, 24),
  };
  // The attributes' rules are C++'s (onnx_attention_attrs_check), asked before anything is in the heap.
  const given = ATTENTION_ATTRS.filter((k) => a[k] !== undefined && k in normalized);
  const attrNames = Object.fromEntries(ATTENTION_ATTRS.map((k) => [k, `attrs.${k}`]));
  status(fn, module.onnxAttentionAttrsCheck(normalized), {
    values: Object.fromEntries(given.map((k) => [`attrs.${k}`, normalized[k]])), names: jsMessageWith(attrNames),
  });
  const hasPast = tensors[4] !== null;
  const wanted = wantedOutputs(fn, outputs, ATTENTION_OUTPUTS, hasPast ? ['Y', 'present_key', 'present_value'] : ['Y']);
  return { tensors, normalized, wanted, out };
}

// pe.onnx.attention (onnxApi's onnxAttention).
function attentionOp(ctx, inputs, attrs, options) {
  const fn = 'onnx.attention';
  const { module, heap: { scoped, f32, u16, status, pieceRows, gatherRows, scatterRows } } = ctx;
  const { tensors, normalized, wanted, out } = attentionArgs(ctx, fn, inputs, attrs, options);
  // Everything but Q goes into the heap whole; Q streams through it in pieces of its rows
  // (heap.js pieceRows; C++ AttentionInputs::q_row0), Y and qk_matmul_output coming out piece by
  // piece: the heap holds K, V, the mask, the past and the presents, and ~4 MiB of Q and Y.
  const [q] = tensors;
  const half = q.dtype === 'float16';  // float16 Q, K, V: computed in float32, outputs rounded to float16
  const view = half ? u16 : f32;
  return scoped(fn, (alloc) => {
    const desc = tensorsToHeap(module, alloc, [null, ...tensors.slice(1)]);
    // Q is described whole (its data is not read) for the checks and the output shapes.
    const whole = { ...desc, Q: { ptr: desc.K.ptr, dtype: DTYPE[q.dtype], dims: q.dims } };
    const [message, shapes] = module.onnxAttentionShapes(whole, normalized);
    status(fn, message);
    // Q, Y and qk_matmul_output as [slabs][Sq][width]: 4D [B, H, Sq, d] or 3D [B, Sq, H·d].
    const four = q.dims.length === 4;
    const rowsOf = (dims) => (four ? { slabs: dims[0] * dims[1], len: dims[2], width: dims[3] }
      : { slabs: dims[0], len: dims[1], width: dims[2] });
    const qRows = rowsOf(q.dims), yRows = rowsOf(shapes.Y);
    const Type = half ? Uint16Array : Float32Array;
    const result = {};
    for (const o of wanted) {
      const n = shapes[o].reduce((x, y) => x * y, 1);
      checkElements(fn, o, n);
      let data = null;
      if (o === 'Y' && out !== undefined) {  // in place over Q only when Y's rows are Q's (V's head size = Q's)
        if (out === q.given && yRows.width !== qRows.width) throw new PosencRangeError(`${fn}: options.out can be Q's data only when V's head size equals Q's`);
        data = checkOut(fn, (half && halfBits(out)) || out, { n, what: "Y's element count", input: q.data, Type });
      }
      result[o] = { data: data ?? new Type(n), dims: shapes[o], type: half ? 'float16' : 'float32' };
    }
    const qk = shapes.qk_matmul_output, qkRows = { slabs: qk[0] * qk[1], len: qk[2], width: qk[3] };
    const wantQk = wanted.includes('qk_matmul_output');
    const Sq = qRows.len;
    const rows = pieceRows(Sq, Math.max(qRows.slabs * qRows.width, yRows.slabs * yRows.width,
      wantQk ? qkRows.slabs * qkRows.width : 0));
    const bytes = half ? 2 : 4;
    const qp = alloc(qRows.slabs * rows * qRows.width * bytes), yp = alloc(yRows.slabs * rows * yRows.width * bytes);
    const qkp = wantQk ? alloc(qkRows.slabs * rows * qkRows.width * bytes) : 0;
    const present = {};
    for (const o of ['present_key', 'present_value']) {
      if (result[o]) present[o] = alloc(Math.max(1, result[o].data.length) * bytes);
    }
    for (let r0 = 0; r0 < Sq; r0 += rows) {
      const n = Math.min(rows, Sq - r0);
      gatherRows(view, qp, q.data, qRows, r0, n);
      const dims = four ? [q.dims[0], q.dims[1], n, q.dims[3]] : [q.dims[0], n, q.dims[2]];
      const piece = { ...desc, Q: { ptr: qp, dtype: DTYPE[q.dtype], dims }, qRow0: r0, qLenTotal: Sq };
      // The presents do not depend on Q: written by the first piece's call.
      status(fn, module[half ? 'onnxAttentionF16' : 'onnxAttention'](piece, normalized, yp,
        r0 === 0 ? present.present_key ?? 0 : 0, r0 === 0 ? present.present_value ?? 0 : 0, qkp));
      scatterRows(result.Y.data, view, yp, yRows, r0, n);
      if (wantQk) scatterRows(result.qk_matmul_output.data, view, qkp, qkRows, r0, n);
    }
    for (const o of Object.keys(present)) result[o].data.set(view(present[o], result[o].data.length));
    // Results of Q's kind (js/tensor.js), float16 data as Q's was (a Float16Array or bits).
    const wrap = wrapperOf(inputs.Q);
    for (const [o, r] of Object.entries(result)) {
      result[o] = wrap(o === 'Y' && out !== undefined ? out : half ? halfLike(r.data, q.given) : r.data, r.dims, r.type);
    }
    return result;
  });
}

// Large X streams through the heap: the whole tensor is checked once, then contiguous runs of
// rows (one (batch, head) slab of a 4D X, or one batch of a 3D X, ~256 KiB at a time) are copied
// in, rotated in place and copied out, so the heap holds the caches and one run, not X and Y.
const RUN_FLOATS = 1 << 16;

// pe.onnx.rotaryEmbedding (onnxApi's onnxRotaryEmbedding).
function rotaryEmbeddingOp(ctx, inputs, attrs, options) {
  const fn = 'onnx.rotaryEmbedding';
  const { module, heap: { scoped, f32, status } } = ctx;
  if (!isPlainObject(inputs)) throw new PosencTypeError(`${fn}: inputs must be an object keyed by slot (X, cos_cache, ...) (got ${describe(inputs)})`);
  for (const key of Object.keys(inputs)) {
    if (!ROTARY_INPUTS.includes(key)) throw new PosencTypeError(`${fn}: unknown input slot ${JSON.stringify(key)} (slots: ${ROTARY_INPUTS.join(', ')})`);
  }
  readAttrs(fn, attrs, ROTARY_ATTRS);
  const { outputs, out } = checkOptions(fn, options, ['outputs', 'out']);
  for (const slot of ['X', 'cos_cache', 'sin_cache']) {
    if (inputs[slot] === undefined || inputs[slot] === null) throw new PosencTypeError(`${fn}: inputs.${slot} is required`);
  }
  const tensors = ROTARY_INPUTS.map((slot) => readTensor(fn, slot, inputs[slot], slot === 'position_ids' ? ['int64'] : ['float32', 'float16']));
  const a = attrs ?? {};
  const interleaved = intAttr(fn, a, 'interleaved', 0, 0, 1);
  const numHeads = intAttr(fn, a, 'num_heads', 0, 1, 2 ** 30);
  const rotaryDim = intAttr(fn, a, 'rotary_embedding_dim', 0, 0, 2 ** 30);
  // { outputs } as for attention (RotaryEmbedding's one output, Y), { out } to write Y into.
  wantedOutputs(fn, outputs, ROTARY_OUTPUTS, ROTARY_OUTPUTS);
  const [x, cos, sin, ids] = tensors;
  const wrap = wrapperOf(inputs.X);  // Y is of X's kind (js/tensor.js)
  if (x.dtype === 'float16') return { Y: wrap(...rotaryFloat16(ctx, fn, tensors, interleaved, rotaryDim, numHeads, out)) };
  if (out !== undefined) checkOut(fn, out, { n: x.n, what: "X's element count", input: x.data });
  const y = out ?? new Float32Array(x.n);
  scoped(fn, (alloc) => {
    // Everything but X goes in whole; X is described as it is for the check, with no data yet.
    const desc = tensorsToHeap(module, alloc, [null, cos, sin, ids]);
    const run = alloc(Math.min(Math.max(1, x.n), RUN_FLOATS + x.dims[x.dims.length - 1]) * 4);
    status(fn, module.onnxRotaryEmbedding({ ...desc, X: { ptr: run, dtype: 0, dims: x.dims } }, interleaved, rotaryDim, numHeads, 0));
    const four = x.dims.length === 4;
    const [B, S] = four ? [x.dims[0], x.dims[2]] : [x.dims[0], x.dims[1]];
    const slabs = four ? B * x.dims[1] : B;
    const rowLen = four ? x.dims[3] : x.dims[2];
    const rows = Math.max(1, Math.floor(RUN_FLOATS / rowLen));
    const half = cos.dims[cos.dims.length - 1];
    for (let slab = 0; slab < slabs; slab++) {
      const b = four ? Math.floor(slab / x.dims[1]) : slab;
      for (let s0 = 0; s0 < S; s0 += rows) {
        const n = Math.min(rows, S - s0);
        const at = (slab * S + s0) * rowLen;
        f32(run, n * rowLen).set(x.data.subarray(at, at + n * rowLen));
        const part = { X: { ptr: run, dtype: 0, dims: four ? [1, 1, n, rowLen] : [1, n, rowLen] } };
        if (ids) {
          Object.assign(part, { cos_cache: desc.cos_cache, sin_cache: desc.sin_cache,
            position_ids: { ptr: desc.position_ids.ptr + (b * S + s0) * 8, dtype: desc.position_ids.dtype, dims: [1, n] } });
        } else {  // caches [B, S, half]: the rows of this run
          const c = (b * S + s0) * half * 4;
          Object.assign(part, { cos_cache: { ...desc.cos_cache, ptr: desc.cos_cache.ptr + c, dims: [1, n, half] },
            sin_cache: { ...desc.sin_cache, ptr: desc.sin_cache.ptr + c, dims: [1, n, half] } });
        }
        status(fn, module.onnxRotaryEmbedding(part, interleaved, rotaryDim, numHeads, run));
        y.set(f32(run, n * rowLen), at);
      }
    }
  });
  return { Y: wrap(y, x.dims.slice(), 'float32') };
}

// float16 X and caches: one call over the whole tensor, rotated in float32, Y rounded to float16.
// → [data, dims, type] of Y.
function rotaryFloat16(ctx, fn, tensors, interleaved, rotaryDim, numHeads, out) {
  const { module, heap: { scoped, u16, status } } = ctx;
  const x = tensors[0];
  if (out !== undefined && !(halfBits(out) && out.length === x.n)) {
    throw new PosencTypeError(`${fn}: options.out must be a Uint16Array (or Float16Array) of X's ${x.n} elements for float16 X (got ${describe(out)})`);
  }
  return scoped(fn, (alloc) => {
    const desc = tensorsToHeap(module, alloc, tensors);
    const y = alloc(Math.max(1, x.n) * 2);
    status(fn, module.onnxRotaryEmbeddingF16(desc, interleaved, rotaryDim, numHeads, y));
    const bits = out ? halfBits(out) : new Uint16Array(x.n);
    bits.set(u16(y, x.n));
    return [out ?? halfLike(bits, x.given), x.dims.slice(), 'float16'];
  });
}

/** pe.onnx over the module and its heap tools: attention and rotaryEmbedding. */
export function onnxApi(module, heap) {
  const ctx = { module, heap };
  function onnxAttention(inputs, attrs, options) { return attentionOp(ctx, inputs, attrs, options); }
  function onnxRotaryEmbedding(inputs, attrs, options) { return rotaryEmbeddingOp(ctx, inputs, attrs, options); }
  return { attention: onnxAttention, rotaryEmbedding: onnxRotaryEmbedding };
}
