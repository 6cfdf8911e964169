// The idiomatic JS API over the Embind module, one module per part of cpp/src: arguments are
// checked first, with the user's names, before anything is allocated in the WASM heap; C++ checks
// the rules again and its status message (snake_case names) is re-worded with the JS names.
// Results are fresh typed arrays owned by JS; the objects that hold WASM memory — HeapFloat32
// (allocFloat32), kvCache and the lab's models and datasets — are freed by delete().
import presets from './presets.js';
import { MAX_ELEMENTS } from './checks.js';
import { heapTools } from './heap.js';
import { sinusoidalApi } from './sinusoidal.js';
import { learnedApi } from './learned.js';
import { ropeNames, ropeParamsApi } from './rope_params.js';
import { ropeApi } from './rope.js';
import { alibiApi } from './alibi.js';
import { t5Api } from './t5.js';
import { attentionApi } from './attention.js';
import { kvCacheApi } from './kv_cache.js';
import { onnxApi } from './onnx.js';
import { makeReadModel } from './model_file.js';
import { wrapLab } from './lab.js';  // the extrapolation lab: pe.lab
import { renewingHeapViews, startThreads } from './threads.js';

export { MAX_ELEMENTS };
export { PosencRangeError, PosencTypeError, isPosencError } from './checks.js';

/**
 * The public API over an Emscripten module; hooks.openPath (Node) opens a file path for readModel,
 * hooks.threads (threaded build) is the thread count to start.
 */
export function wrap(module, hooks = {}) {
  renewingHeapViews(module);
  const threads = startThreads(module, hooks.threads ?? 1);
  const heap = heapTools(module);
  const names = ropeNames(module);
  const alibi = alibiApi(module, heap);
  const t5 = t5Api(module, heap);
  const biasTerms = [alibi.term, t5.term];  // the positional bias terms both attention calls take
  return {
    /** The SIMD instruction set the kernels were compiled for: "wasm" in this build. */
    simdArch: module.simdArch(),
    /** Threads the kernels use: init({ threads }) where shared memory is available, else 1. */
    threads,
    MAX_ELEMENTS,
    /** Real models' position settings (see data/presets.json). */
    presets,
    /** The names RoPE options take, read from the C++ enums (the same lists the checks use). */
    names: {
      ropeScalings: names.scalings,
      ropeLayouts: Object.keys(names.layouts),
      precisions: Object.keys(names.precisions),
    },
    /** The extrapolation lab (js/lab.js). */
    lab: wrapLab(module),

    /** The WASM heap: its size (it grows, up to 2 GiB, and never shrinks) and the bytes in use. */
    heapStats() {
      return { heapBytes: module.HEAPU8.length, inUseBytes: module.heapInUse() };
    },

    ...sinusoidalApi(module, heap),
    ...learnedApi(module, heap),
    ...ropeParamsApi(module, heap, names),
    ...ropeApi(module, heap, names),
    readModel: makeReadModel(module, { status: heap.status, openPath: hooks.openPath }),
    ...alibi.api,
    ...t5.api,
    ...attentionApi(module, heap, { biasTerms, names }),
    ...kvCacheApi(module, heap, { biasTerms, names }),
    /** ONNX operators with their exact semantics: inputs keyed by slot, attrs by attribute name. */
    onnx: onnxApi(module, heap),
  };
}
