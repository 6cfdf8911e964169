// The worker form: the same functions as init()'s, asynchronous, run by a posenc module in a Web
// Worker (js/worker_browser.js) or a Node worker thread (js/worker_node.js); results are the same
// bits. This file holds both sides of the protocol: connect() on the calling side, serve() in the
// worker.
//   calling side → worker: { id, fn, args } (fn 'attention', 'onnx.attention', ...)
//   worker → calling side: { ready: info } once, then { id, result } or { id, error }
// Results are transferred (their buffers move, no copy); inputs are copied, or with
// initWorker({ transfer: true }) transferred too (the caller's arrays are then detached).
import { PosencRangeError, PosencTypeError, checkBool, checkOptions, describe, isPosencError } from './checks.js';
import { ropeResult } from './model_file.js';
import { isTensorLike, isTfTensor, wrapperOf } from './tensor.js';

/** The functions the worker form offers: those whose results are data (no heap handles, no callbacks). */
const WORKER_FUNCTIONS = ['sinusoidal', 'sinusoidalShift', 'embed', 'ropeFrequencies', 'ggmlRopeParams',
  'ropeParamsFromConfig', 'readModel', 'applyRope', 'shiftKeys', 'iropeScale', 'mropePositions', 'applyRope2d', 'ropeCache',
  'alibiSlopes', 'alibiBias', 'attention', 't5Bucket', 't5Bias', 'onnx.attention', 'onnx.rotaryEmbedding'];

// The argument whose kind a result takes (js/tensor.js), per function.
const KIND_ARG = { attention: (a) => a[0], applyRope: (a) => a[0], applyRope2d: (a) => a[0],
  'onnx.attention': (a) => a[0]?.Q, 'onnx.rotaryEmbedding': (a) => a[0]?.X };

/** The ArrayBuffers under typed arrays in v (objects and arrays walked), each once; shared ones left out. */
function buffersIn(v, seen = new Set()) {
  if (ArrayBuffer.isView(v)) {
    if (v.buffer instanceof ArrayBuffer) seen.add(v.buffer);
  } else if (v !== null && typeof v === 'object') {
    for (const x of Array.isArray(v) ? v : Object.values(v)) buffersIn(x, seen);
  }
  return [...seen];
}

// An argument as it can cross: tensors of a class (getters, no own fields) and TF.js tensors become
// plain { data, dims, type }; a TF.js tensor's data is copied (dataSync() may be its own storage).
function plainArgs(v) {
  if (isTfTensor(v)) return { data: v.dataSync().slice(), dims: v.shape.slice(), type: v.dtype };
  if (isTensorLike(v)) return { data: v.data, dims: Array.from(v.dims), type: v.type };
  if (Array.isArray(v)) return v.map(plainArgs);
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plainArgs(x)]));
  }
  return v;
}

// Result tensors (plain { data, dims, type }: a tensor op's result, or the members of one's) made
// of the caller's kind again.
function wrapResults(v, wrap) {
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return v;
  if ('data' in v && 'dims' in v && typeof v.type === 'string') return wrap(v.data, v.dims, v.type);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, wrapResults(x, wrap)]));
}

// A result as the direct call gives it: tensors of the caller's kind, and readModel's rope with its
// non-enumerable .params alias, which structured cloning drops.
function restore(fn, result, kind) {
  if (fn === 'readModel' && result.rope) ropeResult(result.rope);
  return kind ? wrapResults(result, wrapperOf(kind)) : result;
}

const errorOut = (e) => ({ posenc: isPosencError(e), name: e?.name, message: e?.message ?? String(e), code: e?.code,
  cause: e?.cause && { code: e.cause.code, message: e.cause.message } });

function errorIn({ posenc, name, message, code, cause }) {
  const options = cause ? { cause } : undefined;
  if (posenc) return name === 'TypeError' ? new PosencTypeError(message, code, options) : new PosencRangeError(message, code, options);
  const E = { TypeError, RangeError }[name] ?? Error;
  return new E(message, options);
}

/**
 * The calling side over `port` ({ postMessage(msg, transfer), onMessage(fn), terminate(), ref?(),
 * unref?() }; the entries adapt a Worker to it) → Promise of the worker API once the worker's
 * module is loaded.
 */
export function connect(port, { transfer = false } = {}) {
  const pending = new Map();
  let next = 1;
  let ready;
  const loaded = new Promise((ok, fail) => { ready = { ok, fail }; });
  port.onMessage((msg) => {
    if (msg.ready) return ready.ok(msg.ready);
    if (msg.initError) return ready.fail(errorIn(msg.initError));
    const call = pending.get(msg.id);
    pending.delete(msg.id);
    if (pending.size === 0) port.unref?.();
    if (msg.error) call.fail(errorIn(msg.error));
    else call.ok(call.fn === 'shiftKeysCopy' ? msg.result : restore(call.fn, msg.result, call.kind));
  });
  port.onError?.((e) => {
    for (const call of pending.values()) call.fail(e);
    pending.clear();
    ready.fail(e);
  });

  function call(fn, args) {
    if (fn === 'shiftKeys') return shiftKeys(args);
    const kind = KIND_ARG[fn]?.(args);
    if (args[args.length - 1]?.out !== undefined) {
      return Promise.reject(new PosencTypeError(`${fn}: options.out is not taken by the worker form: its result is transferred to you, not copied into an array`));
    }
    const sent = plainArgs(args);
    return post(fn, sent, isTensorLike(kind) || isTfTensor(kind) ? kind : null, transfer ? buffersIn(sent) : []);
  }

  function post(fn, args, kind, transferList = []) {
    return new Promise((ok, fail) => {
      const id = next++;
      pending.set(id, { ok, fail, fn, kind });
      port.ref?.();
      port.postMessage({ id, fn, args }, transferList);
    });
  }

  // shiftKeys turns k in place: the worker shifts a copy, which is copied back into k.
  async function shiftKeys([k, options]) {
    if (isTfTensor(k) || !(k instanceof Float32Array || isTensorLike(k))) {
      throw new PosencTypeError(`shiftKeys: the worker form shifts a Float32Array or a tensor { data, dims } in place (got ${describe(k)})`);
    }
    const shifted = await post('shiftKeysCopy', plainArgs([k, options]), null);
    (k instanceof Float32Array ? k : k.data).set(shifted);
  }

  return loaded.then((info) => {
    const api = { ...info, onnx: {}, terminate() {
      port.terminate();
      for (const c of pending.values()) c.fail(new PosencTypeError('the posenc worker was terminated'));
      pending.clear();
    } };
    for (const name of WORKER_FUNCTIONS) {
      const [a, b] = name.split('.');
      if (b) api[a][b] = (...args) => call(name, args);
      else api[a] = (...args) => call(name, args);
    }
    port.unref?.();
    return api;
  });
}

/** The worker options, checked on the calling side; → [the worker's init options, connect's options]. */
export function workerOptions(options, initKeys) {
  const o = checkOptions('initWorker', options, [...initKeys, 'transfer']);
  const { transfer = false, ...rest } = o;
  return [rest, { transfer: checkBool('initWorker', 'transfer', transfer) }];
}

/** In the worker: loads posenc with init(options) and answers calls on `port` ({ postMessage, onMessage }). */
export async function serve(port, init, options) {
  let pe;
  try {
    pe = await init(options);
  } catch (e) {
    port.postMessage({ initError: errorOut(e) });
    return;
  }
  const fns = { ...Object.fromEntries(WORKER_FUNCTIONS.map((name) => {
    const [a, b] = name.split('.');
    return [name, b ? pe[a][b] : pe[a]];
  })), shiftKeysCopy: (k, o) => {
    const copy = { data: Float32Array.from(isTensorLike(k) ? k.data : k), dims: isTensorLike(k) ? k.dims : null };
    pe.shiftKeys(copy.dims ? copy : copy.data, o);
    return copy.data;
  } };
  port.onMessage(async ({ id, fn, args }) => {
    try {
      const result = await fns[fn](...args);
      port.postMessage({ id, result }, buffersIn(result));
    } catch (e) {
      port.postMessage({ id, error: errorOut(e) });
    }
  });
  port.postMessage({ ready: { simdArch: pe.simdArch, threads: pe.threads, MAX_ELEMENTS: pe.MAX_ELEMENTS, names: pe.names } });
}
