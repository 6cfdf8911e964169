// Tensors in and out. An op's data argument may be a flat typed array, a tensor { data, dims }
// (onnxruntime-web's Tensor, transformers.js's Tensor, or a plain object) or a TensorFlow.js tensor;
// its result is the same kind: a typed array for a typed array, an instance of the same class
// (constructed as new T(type, data, dims), the signature onnxruntime's and transformers.js's Tensor
// share) for a class instance, and a plain { data, dims, type } for a plain object or a TensorFlow.js
// tensor (tf.tensor(y.data, y.dims) makes it one again). float16 data is a Float16Array where the
// runtime has one, or a Uint16Array of IEEE half bits.
import { PosencRangeError, PosencTypeError, checkInt, describe } from './checks.js';

const F16 = globalThis.Float16Array;

/** float16 data as its bits (a Uint16Array over the same memory), or null when data is not float16. */
export function halfBits(data) {
  if (data instanceof Uint16Array) return data;
  if (F16 && data instanceof F16) return new Uint16Array(data.buffer, data.byteOffset, data.length);
  return null;
}

/** Result bits as the caller gave float16: a Float16Array over the same memory if `like` is one. */
export const halfLike = (bits, like) => (F16 && like instanceof F16 ? new F16(bits.buffer, bits.byteOffset, bits.length) : bits);

export const isFloat16Array = (x) => Boolean(F16) && x instanceof F16;

export function isTfTensor(x) {
  return x !== null && typeof x === 'object' && typeof x.dataSync === 'function' && Array.isArray(x.shape) &&
    typeof x.dtype === 'string';
}

export function isTensorLike(x) {
  return x !== null && typeof x === 'object' && !ArrayBuffer.isView(x) && 'data' in x && 'dims' in x;
}

const plain = (data, dims, type) => ({ data, dims, type });

/** wrap(data, dims, type) → a result of x's kind (x a tensor; see the top of this file). */
export function wrapperOf(x) {
  const C = x?.constructor;
  if (isTfTensor(x) || !(typeof C === 'function' && C !== Object && typeof x.type === 'string')) return plain;
  return (data, dims, type) => new C(type, data, dims);
}

/**
 * An op's argument → { data, dims, type, wrap }: dims null for a flat typed array; type the
 * tensor's ('float32', 'float16', ...) or undefined; wrap(data, dims, type) makes a result of the
 * caller's kind (see the top of this file).
 */
export function tensorArg(fn, name, x) {
  if (isTfTensor(x)) return { data: x.dataSync(), dims: readDims(fn, name, x.shape, 'shape'), type: x.dtype, wrap: plain };
  if (!isTensorLike(x)) return { data: x, dims: null, type: undefined, wrap: (data) => data };
  return { data: x.data, dims: readDims(fn, name, x.dims, 'dims'), type: x.type, wrap: wrapperOf(x) };
}

function readDims(fn, name, dims, field) {
  if (!(Array.isArray(dims) || (ArrayBuffer.isView(dims) && !(dims instanceof DataView)))) {
    throw new PosencTypeError(`${fn}: ${name}.${field} must be an array of integers (got ${describe(dims)})`);
  }
  return Array.from(dims, (d, i) => {
    const n = typeof d === 'bigint' ? Number(d) : d;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
      throw new PosencRangeError(`${fn}: ${name}.${field}[${i}] must be an integer >= 0 (got ${describe(d)})`);
    }
    return n;
  });
}

/**
 * t's data as float32 for an op computed in float32: a Float32Array as is, a Float16Array widened
 * (exactly; `half` true, so the result is rounded back). Refuses other data, and tensors of another type.
 */
export function float32Data(fn, name, t) {
  const { data, type } = t;
  if (type !== undefined && type !== 'float32' && type !== 'float16') {
    throw new PosencTypeError(`${fn}: ${name} must be a float32 or float16 tensor (got type ${describe(type)})`);
  }
  if (data instanceof Float32Array && type !== 'float16') return { data, half: false };
  if (isFloat16Array(data)) return { data: Float32Array.from(data), half: true };
  const want = F16 ? 'a Float32Array or Float16Array' : 'a Float32Array';
  const bits = data instanceof Uint16Array ? '; float16 bits in a Uint16Array are taken by the onnx.* ops' : '';
  throw new PosencTypeError(`${fn}: ${name}${t.dims ? '.data' : ''} must be ${want}${bits} (got ${describe(data)})`);
}

/** A float32 result back in the precision the caller gave: rounded to a Float16Array when `half`. */
export const fromFloat32 = (y, half) => (half ? new F16(y) : y);

/**
 * The extents { batch, len, heads, headDim } of x [batch][len][heads][headDim] (`headsMajor`:
 * [batch][heads][len][headDim]). A tensor's come from its dims: rank 4 as the layout says, or rank 3
 * [batch, len, heads · headDim] (ONNX's 3-D form; heads from the options, token-major only); any
 * value the options give must agree. A flat array's come from the options: batch (default 1),
 * heads and headDim required, len from the options or else from the length.
 * given: the options' { batch, len, heads, headDim } (undefined when not given); names: the JS names
 * of len and heads ('seqLen' / 'qLen', 'nHeads' / 'nKvHeads'), for the messages.
 */
export function extents(fn, name, t, given, { headsMajor = false, names }) {
  const label = { batch: 'batch', len: names.len, heads: names.heads, headDim: 'headDim' };
  const order = headsMajor ? ['batch', 'heads', 'len', 'headDim'] : ['batch', 'len', 'heads', 'headDim'];
  const n = t.data.length;
  if (t.dims) {
    const d = t.dims;
    let e;
    if (d.length === 4) e = Object.fromEntries(order.map((k, i) => [k, d[i]]));
    else if (d.length === 3 && !headsMajor && given.heads !== undefined) {
      const heads = checkInt(fn, names.heads, given.heads, 1);
      if (d[2] % heads !== 0) {
        throw new PosencRangeError(`${fn}: ${name}.dims[2] = ${d[2]} must be ${names.heads} * headDim, a multiple of ${names.heads} = ${heads}`);
      }
      e = { batch: d[0], len: d[1], heads, headDim: d[2] / heads };
    } else {
      const four = order.map((k) => label[k]).join(', ');
      const three = headsMajor ? '' : ` or 3-D [batch, ${names.len}, ${names.heads} * headDim] with options.${names.heads}`;
      throw new PosencRangeError(`${fn}: ${name}.dims must be 4-D [${four}]${three} (got [${d}])`);
    }
    for (const k of order) {
      if (e[k] === 0) throw new PosencRangeError(`${fn}: ${name}.dims must not hold a 0 (got [${d}])`);
      if (given[k] !== undefined && given[k] !== e[k]) {
        throw new PosencRangeError(`${fn}: ${label[k]} = ${describe(given[k])} differs from ${name}.dims, which give ${e[k]} (dims [${d}])`);
      }
    }
    if (e.batch * e.len * e.heads * e.headDim !== n) {
      throw new PosencRangeError(`${fn}: ${name}.data has ${n} elements but dims [${d}] need ${e.batch * e.len * e.heads * e.headDim}`);
    }
    return e;
  }
  const batch = given.batch === undefined ? 1 : checkInt(fn, 'batch', given.batch, 1);
  const heads = checkInt(fn, names.heads, given.heads, 1, 2 ** 20);
  const headDim = checkInt(fn, 'headDim', given.headDim, 1, 2 ** 20);
  const per = batch * heads * headDim;
  const what = `${batch > 1 ? 'batch * ' : ''}${names.len} * ${names.heads} * headDim`;
  if (given.len !== undefined) {
    const len = checkInt(fn, names.len, given.len, 1);
    if (len * per !== n) throw new PosencRangeError(`${fn}: ${name}.length must equal ${what} = ${len * per} (got ${n})`);
    return { batch, len, heads, headDim };
  }
  if (n === 0 || n % per !== 0) {
    const of = batch > 1 ? 'batch * ' : '';
    throw new PosencRangeError(`${fn}: ${name}.length must be a non-zero multiple of ${of}${names.heads} * headDim = ${per} (got ${n})`);
  }
  return { batch, len: n / per, heads, headDim };
}
