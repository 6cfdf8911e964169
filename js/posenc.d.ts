/// <reference lib="esnext.disposable" />
// Type declarations for the posenc npm package (hand-written; keep in step with api.js).

/** The largest result one call may return, in float32 elements (2^28 = 1 GiB). */
export declare const MAX_ELEMENTS: number;

/**
 * The C++ StatusCode an error carries: every error the API throws is a RangeError or TypeError
 * with `code` — the core's status ('kBadShape' for extents that do not fit together, 'kTooLarge'
 * for what would not fit in memory, 'kUnavailable' for bytes a file could not supply), or
 * 'kBadArgument' / 'kTooLarge' from the checks the JS layer makes before calling the core.
 */
export type StatusCodeName = 'kBadArgument' | 'kBadShape' | 'kTooLarge' | 'kUnavailable';
export interface PosencError extends Error {
  readonly code: StatusCodeName;
}
/** A value that breaks its rule (or bytes a file could not supply: 'kUnavailable', the system's error as cause). */
export declare class PosencRangeError extends RangeError implements PosencError {
  readonly code: StatusCodeName;
  constructor(message: string, code?: StatusCodeName, options?: { cause?: unknown });
}
/** An argument of the wrong type, or an unknown option key (named before anything else is checked). */
export declare class PosencTypeError extends TypeError implements PosencError {
  readonly code: StatusCodeName;
  constructor(message: string, code?: StatusCodeName, options?: { cause?: unknown });
}
/** Whether e is an error posenc threw: a PosencRangeError or PosencTypeError. */
export declare function isPosencError(e: unknown): e is PosencRangeError | PosencTypeError;

export interface InitOptions {
  /** The module's bytes, if you already have them (skips reading or fetching posenc.wasm). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Browser only: where to fetch posenc.wasm from (default: next to the package's browser.js). */
  wasmUrl?: string | URLIfAvailable;
  /**
   * Threads for the kernels, 1–64 (default 1). Above 1, the pthreads build is loaded with a pool of
   * threads - 1 workers: in Node always, in browsers when the page is crossOriginIsolated (served with
   * COOP/COEP), otherwise the single-threaded build, with a console warning (once) giving the reason;
   * `pe.threads` says which. Not combinable with wasmBinary / wasmUrl (the single-threaded module's).
   */
  threads?: number;
}

/** Any array-like of numbers: Array, Float32Array, Float64Array, Int32Array, BigInt64Array, ... */
export type NumberArray = ArrayLike<number> | BigInt64Array;

export type SinusoidalLayout = 'interleaved' | 'concat';

export interface SinusoidalOptions {
  /** The base of the geometric frequency series; default 10000 (Vaswani et al. 2017). */
  base?: number;
  /** 'interleaved' (sin, cos per pair; the paper, HF) or 'concat' ([sin | cos]; tensor2tensor, fairseq). */
  layout?: SinusoidalLayout;
}

export interface SinusoidalTableOptions extends SinusoidalOptions {
  /** Rows for these positions (seqLen of them) instead of 0 … seqLen-1. */
  positions?: NumberArray;
}

export type RopeScalingType =
  'none' | 'default' | 'linear' | 'ntk' | 'dynamic' | 'yarn' | 'llama3' | 'longrope' | 'proportional';

/** Scaling parameters, with the semantics of HF transformers' modeling_rope_utils.py. */
export interface RopeScaling {
  type: RopeScalingType;
  factor?: number;
  originalMaxPositionEmbeddings?: number;
  maxPositionEmbeddings?: number;
  /** YaRN; default 32. */
  betaFast?: number;
  /** YaRN; default 1. */
  betaSlow?: number;
  /** YaRN (DeepSeek): attentionFactor = mscale(factor, mscale) / mscale(factor, mscaleAllDim) when both are non-zero. */
  mscale?: number;
  mscaleAllDim?: number;
  /** Overrides the default attention factor (yarn, longrope). */
  attentionFactor?: number;
  /** YaRN: floor/ceil the correction range; default true. */
  truncate?: boolean;
  /** llama3; defaults 1 and 4. */
  lowFreqFactor?: number;
  highFreqFactor?: number;
  /** longrope: rotaryDim / 2 factors each. */
  shortFactor?: NumberArray;
  longFactor?: NumberArray;
  /**
   * longrope: llama.cpp's switch — long factors iff contextLength (its n_ctx per sequence) >
   * originalMaxPositionEmbeddings, whatever seqLen is. Unset: HF's switch on the current seqLen.
   * readModel sets it to a GGUF's context length; set it to the context you run with.
   */
  contextLength?: number;
}

export interface RopeParams {
  headDim: number;
  /** Rotated dimensions (even, <= headDim); default int(headDim * partialRotaryFactor). */
  rotaryDim?: number;
  /**
   * The first rotated dimension: dims [rotaryOffset, rotaryOffset + rotaryDim) of each head turn,
   * the others pass through. Default 0; DeepSeek-V2/V3 (MLA) 128: the rope part follows the nope part.
   */
  rotaryOffset?: number;
  partialRotaryFactor?: number;
  /** rope_theta; default 10000. */
  theta?: number;
  scaling?: RopeScaling;
  /**
   * Per-pair divisors applied after the scaling (llama.cpp's freq_factors, e.g. a Llama-3.1 GGUF's
   * rope_freqs.weight): invFreq[i] /= freqFactors[i]; rotaryDim / 2 positive values.
   */
  freqFactors?: NumberArray;
  /**
   * M-RoPE (Qwen2-VL / Qwen2.5-VL; Qwen3-VL with interleaved): section = pairs turned by the
   * temporal, height and width position ids, summing to rotaryDim / 2. applyRope then takes
   * positions [3][seqLen] (see mropePositions).
   */
  mrope?: {
    section: [number, number, number] | number[];
    interleaved?: boolean;
    /**
     * The pairs no section claims: 'temporal' (HF, the default) or 'unrotated' (llama.cpp's
     * ggml_rope_multi, whose 4th position id is 0; sections may then sum to less than rotaryDim / 2).
     */
    rest?: 'temporal' | 'unrotated';
  };
  /**
   * The model's pair layout (default 'halfSplit'): applyRope, shiftKeys and attention use it when
   * their own `layout` option is not given. readModel reports llama.cpp's for a GGUF (NORM →
   * 'interleaved', NEOX → 'halfSplit') and HF's for a config.json.
   */
  layout?: RopeLayout;
}

export interface RopeFrequencies {
  /** Radians per position for each rotated pair: Float32Array(rotaryDim / 2). */
  invFreq: Float32Array;
  /** The factor cos and sin are multiplied by (scaling.attentionFactor if set, else yarn's or longrope's, else 1). */
  attentionFactor: number;
  rotaryDim: number;
}

export type RopeLayout = 'halfSplit' | 'interleaved';
/**
 * 'fast': float32(pos) · float32(invFreq), one float32 product (HF's forward, given HF's table —
 * pass HF's float32 inv_freq as invFreq to reproduce HF exactly); 'accurate': the angle in
 * float64, reduced mod 2π; 'ggml': the angle as llama.cpp's ggml forms it (needs params).
 */
export type Precision = 'fast' | 'accurate' | 'ggml';

/** Which frequencies, at which positions: shared by applyRope and ropeCache. */
export interface RopeInputs {
  /** Must match the frequencies given (2 * invFreq.length). */
  rotaryDim?: number;
  /** One position per token (may be negative: rotating by -p undoes +p). */
  positions?: NumberArray;
  /** Positions offset + 0 … seqLen-1 when positions are not given; default 0. A bigint is taken as BigInt64Array positions are. */
  offset?: number | bigint;
  /** Exactly one of invFreq and params. */
  invFreq?: NumberArray;
  params?: RopeParams;
  /** 'fast' (default), 'accurate' or 'ggml' (with params only; its gain comes from them). */
  precision?: Precision;
  /** Multiplies cos and sin; default: the params' attention factor, or 1 with invFreq. */
  attentionFactor?: number;
}

export interface ApplyRopeOptions extends RopeInputs {
  seqLen: number;
  nHeads: number;
  /**
   * Defaults to params.headDim — or to the params' rotaryDim when x is that wide: the rotated slice
   * alone (DeepSeek's q_pe / k_pe, whose params say rotaryOffset 128 of headDim 192), turned from dim 0.
   */
  headDim?: number;
  /**
   * Sequences in x, one after another (default 1): x [batch][seqLen][nHeads][headDim]. Each starts
   * at offset, or takes positions: one row for all, or [batch][seqLen] (HF's position_ids).
   */
  batch?: number;
  /**
   * 'halfSplit' (pairs i, i + rotaryDim/2: NeoX, HF Llama) or 'interleaved' (2i, 2i+1: GPT-J,
   * RoFormer); default params.layout, else 'halfSplit'.
   */
  layout?: RopeLayout;
  /** The first rotated dimension of each head; default params.rotaryOffset, else 0. */
  rotaryOffset?: number;
  /**
   * xPos (Sun et al. 2022): pair k also scaled by ζ_k^(±(p − center) / scaleBase), ζ_k =
   * (2k / rotaryDim + 0.4) / 1.4 — + for queries, − for keys — so q·k decays with the distance.
   */
  xpos?: XposOptions;
}

export interface XposOptions {
  /** 'query' or 'key': their scales are reciprocal. */
  role: 'query' | 'key';
  /** γ, default 512 (the paper's and torchscale's). */
  scaleBase?: number;
  /** Positions are taken relative to it (it cancels in q·k; keeps ζ^e in float range); default 0. */
  center?: number;
}

/** applyRope's options for tensors: seqLen, nHeads, headDim and batch come from the dims. */
export type TensorRopeOptions = Omit<ApplyRopeOptions, 'seqLen' | 'nHeads'> & { seqLen?: number; nHeads?: number };

export interface Rope2dOptions {
  nHeads?: number;
  headDim?: number;
  /** Images in x, one after another (default 1), each with the same patch positions. */
  batch?: number;
  theta?: number;
  grid?: [number, number];
  positions?: NumberArray;
  seqLen?: number;
  layout?: RopeLayout;
  precision?: 'fast' | 'accurate';
}

export interface ShiftKeysOptions {
  seqLen: number;
  /** The key heads (nKvHeads). */
  nHeads: number;
  /** Defaults to params.headDim (or its rotaryDim for keys that are the rotated slice alone). */
  headDim?: number;
  /** Sequences in k (default 1); a delta per token is one row for all or one per token of every row. */
  batch?: number;
  /** Positions to move by: one for all tokens, or one per token (may be negative). */
  delta: number | bigint | NumberArray;
  /** Exactly one of invFreq and params. */
  invFreq?: NumberArray;
  params?: RopeParams;
  rotaryDim?: number;
  /** Default params.layout, else 'halfSplit'. */
  layout?: RopeLayout;
  /** Default params.rotaryOffset, else 0. */
  rotaryOffset?: number;
  precision?: 'fast' | 'accurate';
}

export interface RopeCacheOptions extends RopeInputs {
  /** Default: positions.length. */
  seqLen?: number;
}

export interface RopeCache {
  /** [seqLen][rotaryDim / 2], the ONNX RotaryEmbedding cos_cache layout. */
  cos: Float32Array;
  sin: Float32Array;
  rotaryDim: number;
}

/** A Float32Array inside the WASM heap for applyRopeInPlace. Free it with delete() (or `using`). */
export interface HeapFloat32 {
  readonly length: number;
  /** Heap address in bytes; 0 after delete(). */
  readonly ptr: number;
  /** A borrowed view: take a new one after any posenc call (memory growth detaches old views). */
  readonly array: Float32Array;
  /** Frees the memory; a second call does nothing. */
  delete(): void;
  [Symbol.dispose](): void;
}

export interface LearnedTableOptions {
  /** Seed of the N(0, std²) initializer; default 0. */
  seed?: number;
  /** Default 0.02 (BERT, GPT-2 initializer_range). */
  std?: number;
  /** Your trained weights, [maxLen][dModel]; copied. */
  weights?: Float32Array;
  /** Added to every position (RoBERTa: padding_idx + 1 = 2); default 0. */
  offset?: number | bigint;
}

export interface LearnedTable {
  readonly maxLen: number;
  readonly dModel: number;
  readonly offset: number;
  /** The table, [maxLen][dModel]. */
  readonly weights: Float32Array;
  /** Rows for positions, [n][dModel]. RangeError for a position whose row is past maxLen. */
  lookup(positions: NumberArray): Float32Array;
}

export interface EmbedOptions {
  /** [vocab][dModel]. */
  tokenEmbeddings: Float32Array;
  dModel: number;
  /** [rows][dModel], any source: sinusoidal(), learnedTable().weights, ... */
  positionTable: Float32Array;
  /** Default 0 … n-1. */
  positions?: NumberArray;
  /** Token embedding scale; default sqrt(dModel) (Vaswani et al. §3.4). BERT and GPT-2 use 1. */
  scale?: number;
}

export interface AlibiBiasOptions {
  /** -inf for keys after the query; default true. */
  causal?: boolean;
  maxBias?: number;
  /** Key position of query 0; default kLen - qLen (decoding with a cache); 0 as HF compute_bias / onnxruntime. */
  queryOffset?: number | bigint;
}

export interface T5BucketOptions {
  /** Encoder: true (default); decoder self-attention: false. */
  bidirectional?: boolean;
  numBuckets?: number;
  maxDistance?: number;
}

export interface T5BiasOptions extends T5BucketOptions {
  /** Key position of query 0; default kLen - qLen (decoding with a cache); 0 as HF compute_bias / onnxruntime. */
  queryOffset?: number | bigint;
}

/** ggml_rope_ext's parameters as llama.cpp would pass them for these RopeParams. */
export interface GgmlRopeParams {
  nDims: number;
  freqBase: number;
  freqScale: number;
  extFactor: number;
  attnFactor: number;
  /** ggml_rope_yarn_corr_dims: [low, high]. */
  corrDims: [number, number];
  freqFactors: Float32Array | null;
}

/** What readModel found. Absent fields: the file does not say. */
export interface ModelInfo {
  format: 'gguf' | 'safetensors' | 'npy' | 'config';
  /** general.architecture (GGUF) or model_type (config.json); '' if the file does not say. */
  architecture: string;
  nHeads?: number;
  nKvHeads?: number;
  /** max_position_embeddings / {arch}.context_length. */
  contextLength?: number;
  /** The model's width: hidden_size, n_embd, d_model or dim / {arch}.embedding_length. */
  dModel?: number;
  /** RoPE of the (full-attention) layers, ready for ropeFrequencies / applyRope / attention. */
  rope?: RopeParams & { /** The same object (the earlier `{ params }` shape); not enumerable. */ readonly params: RopeParams };
  /** Sliding-window layers: keys before each query, and their RoPE where it differs (Gemma 3). */
  sliding?: { window?: number; params?: RopeParams };
  alibi?: { nHeads: number; maxBias: number };
  t5?: { nHeads: number; numBuckets: number; maxDistance: number; bidirectional: boolean; name?: string; table?: Float32Array };
  /** Llama 4 (config.json): chunked RoPE layers and temperature-tuned NoPE layers (ropeLayers[l] false). */
  irope?: { chunkSize: number; floorScale: number; attnScale: number; temperatureTuning: boolean; ropeLayers: boolean[] };
  /** A learned table [maxLen][dModel]; weights null when only its shape is known (config.json). */
  positionTable?: { name: string; maxLen: number; dModel: number; weights: Float32Array | null };
  /** Every tensor of a GGUF / safetensors / .npy file (shape slowest dimension first). */
  tensors: { name: string; dtype: string; shape: number[] }[];
  /** What could not be interpreted, naming the keys. */
  warnings: string[];
  /** Bytes read from the source (the header and the small tensors needed). */
  bytesRead: number;
}

export interface ReadModelOptions {
  /** The 2-D tensor to read as the position table (default: the one named like one, e.g. wpe.weight). */
  tableName?: string;
  /** Refuse tables with more values than this; default 2^26. */
  maxTableFloats?: number;
}

/**
 * Blob (File) and URL where the compilation declares them (the DOM lib, or @types/node), else never:
 * these declarations compile with lib es2022 alone.
 */
export type BlobIfAvailable = typeof globalThis extends { Blob: { prototype: infer B } } ? B : never;
export type URLIfAvailable = typeof globalThis extends { URL: { prototype: infer U } } ? U : never;
/** A parsed config.json: a plain object (not a class instance, a Map or an array). */
export type ConfigJson = { readonly [key: string]: unknown };
/**
 * What readModel reads: a File / Blob, the file's bytes (an ArrayBuffer or a view of one),
 * config.json as text or parsed, or in Node a file path or file: URL.
 */
export type ModelSource = BlobIfAvailable | ArrayBuffer | ArrayBufferView | string | URLIfAvailable | ConfigJson;

export interface ConfigOptions {
  /** For per-layer RoPE (Gemma 3): 'full_attention' or 'sliding_attention'. */
  layerType?: string;
  /** 'hf' (config.json; default) or 'gguf' (GGUF metadata as a key → value object). */
  dialect?: 'hf' | 'gguf';
}

export interface Preset {
  id: string;
  name: string;
  scheme: 'rope' | 'learned' | 'alibi' | 't5';
  layout?: RopeLayout;
  layerTypes?: string[];
  /** Where the values come from (Hugging Face repository and file). */
  source: string;
  /** The position-related keys of the model's config.json, as published. */
  config: Record<string, unknown>;
}

/**
 * Float16Array where the compilation declares it (lib esnext.float16, or the DOM of a browser that
 * ships it), else never: float16 data may be a Float16Array where the runtime has one, and results
 * then come back as Float16Arrays; a Uint16Array of IEEE half bits is taken where it was before.
 */
export type Float16ArrayIfAvailable = typeof globalThis extends { Float16Array: { prototype: infer F } } ? F : never;

/**
 * A tensor { data, dims } (and type): onnxruntime-web's Tensor, transformers.js's Tensor or a plain
 * object. Its data is checked when called: float32 → Float32Array; float16 → Float16Array or
 * Uint16Array of bits (onnx.* ops); bool → Uint8Array or boolean[]; int64 → BigInt64Array or number[].
 */
export interface TensorLike {
  readonly data: ArrayLike<unknown>;
  readonly dims: ArrayLike<number> | readonly number[];
  readonly type?: string;
}

/** A TensorFlow.js tensor, as posenc reads it (shape, dtype, dataSync()). */
export interface TfTensorLike {
  readonly shape: number[];
  readonly dtype: string;
  dataSync(): ArrayLike<number>;
}

/**
 * A tensor in, the same kind out: an instance of a tensor class (onnxruntime-web's or transformers.js's
 * Tensor: it has a type) → that class (new T(type, data, dims)); a plain object or a TF.js tensor →
 * a plain OutputTensor.
 */
export type ShapedInput = TensorLike | TfTensorLike;
export type TensorResult<T> = T extends { readonly type: string } ? T : OutputTensor;

/** A plain result tensor: tf.tensor(y.data, y.dims) makes a TF.js tensor of it. */
export interface OutputTensor {
  /** Float32Array; float16 results: a Float16Array if the input's was one, else Uint16Array bits. */
  data: Float32Array | Uint16Array | Float16ArrayIfAvailable;
  dims: number[];
  type: 'float32' | 'float16';
}

export interface OnnxAttentionInputs<T extends ShapedInput = ShapedInput> {
  Q: T;
  K: ShapedInput;
  V: ShapedInput;
  attn_mask?: ShapedInput | null;
  past_key?: ShapedInput | null;
  past_value?: ShapedInput | null;
  /** opset 24 only. */
  nonpad_kv_seqlen?: ShapedInput | null;
}

export interface OnnxAttentionAttrs {
  is_causal?: number | boolean;
  kv_num_heads?: number;
  q_num_heads?: number;
  qk_matmul_output_mode?: number;
  scale?: number;
  softcap?: number;
  /** 1 (FLOAT) only: posenc computes in float32. */
  softmax_precision?: number;
}

export type AttentionOutputSlot = 'Y' | 'present_key' | 'present_value' | 'qk_matmul_output';

export interface OnnxAttentionOptions {
  /** Output slots wanted, as a node lists them ('' = omitted). Default Y (+ present_* with a past). */
  outputs?: Array<AttentionOutputSlot | ''>;
  /** 23 or 24 (default). */
  opset?: number;
  /** Write Y here (Float32Array; for float16 a Uint16Array or Float16Array; Y's size; may be Q's data when V's head size equals Q's). */
  out?: Float32Array | Uint16Array | Float16ArrayIfAvailable;
}

export interface OnnxRotaryEmbeddingOptions {
  /** Output slots wanted, as a node lists them: RotaryEmbedding has one, Y. */
  outputs?: Array<'Y' | ''>;
  /** Write Y here (X's size: a Float32Array, or a Uint16Array or Float16Array for float16 X; may be X's data). */
  out?: Float32Array | Uint16Array | Float16ArrayIfAvailable;
}

export interface OnnxRotaryEmbeddingInputs<T extends ShapedInput = ShapedInput> {
  X: T;
  cos_cache: ShapedInput;
  sin_cache: ShapedInput;
  position_ids?: ShapedInput | null;
}

export interface OnnxRotaryEmbeddingAttrs {
  interleaved?: number | boolean;
  num_heads?: number;
  rotary_embedding_dim?: number;
}

/** The positional bias terms that attention and kvCache.attend both take (C++ PositionBias). */
export interface PositionBiasOptions {
  /** ALiBi: true (max bias 8), { maxBias }, or your slopes (bias -slope_h · |query pos - key pos|). */
  alibi?: boolean | { maxBias?: number } | Float32Array;
  /** T5 relative bias from table [numBuckets][nHeads] (bucket of key pos - query pos); bidirectional defaults to !causal. */
  t5?: { table: Float32Array; bidirectional?: boolean; numBuckets?: number; maxDistance?: number };
}

export interface AttentionOptions extends PositionBiasOptions {
  nHeads: number;
  /** Default nHeads; must divide it (GQA / MQA). */
  nKvHeads?: number;
  headDim: number;
  /**
   * Sequences in q, k and v, one after another (default 1): q [batch][qLen][nHeads][headDim] ('bshd')
   * or [batch][nHeads][qLen][headDim] ('bhsd'). Flat arrays of a batch need it: without it, batch-2
   * data is one sequence of twice the tokens. Tensors give it in their dims.
   */
  batch?: number;
  /** Key j visible to query i iff j <= i + kvLen - qLen. Default false. */
  causal?: boolean;
  /** RoPE on q and k inside the call: RopeParams, or { params | invFreq, layout, precision, attentionFactor }. */
  rope?: RopeParams | { params?: RopeParams; invFreq?: NumberArray; layout?: RopeLayout; rotaryOffset?: number; precision?: 'fast' | 'accurate'; attentionFactor?: number };
  /**
   * Additive bias, -Infinity masks: flat [qLen][kvLen], [nHeads][qLen][kvLen] or
   * [batch][nHeads][qLen][kvLen]; a tensor's dims broadcast to [batch, nHeads, qLen, kvLen] as ONNX's
   * attn_mask (e.g. a padding mask [batch, 1, qLen, kvLen]).
   */
  mask?: Float32Array | TensorLike | TfTensorLike;
  /** Default 1 / sqrt(headDim). */
  scale?: number;
  softcap?: number;
  /** Also return the attention weights [batch][nHeads][qLen][kvLen]. */
  returnWeights?: boolean;
  /**
   * Sliding window (HF's sliding_window): key j is visible to the query at position p iff
   * p - window < j (the window counts the query's own key); without causal also j < p + window.
   */
  window?: number;
  /** StreamingLLM: keys 0 … sinkTokens-1 stay visible beside the window. */
  sinkTokens?: number;
  /** gpt-oss: one learned logit per head added to every softmax row, carrying no value. */
  sinks?: Float32Array;
  /** Llama 4 RoPE layers: key j visible iff floor(j / chunkSize) = floor(p / chunkSize). */
  chunkSize?: number;
  /** Llama 4 NoPE layers: q times log(floor((p + 1) / floorScale) + 1) · attnScale + 1 (defaults 8192, 0.1). */
  temperature?: { floorScale?: number; attnScale?: number };
  /**
   * 'bshd' (default): q [batch][qLen][nHeads][headDim], k/v [batch][kvLen][nKvHeads][headDim];
   * 'bhsd': heads major, q [batch][nHeads][qLen][headDim], k/v [batch][nKvHeads][kvLen][headDim]
   * (ONNX's 4-D layout), output likewise.
   */
  layout?: 'bshd' | 'bhsd';
  /**
   * 'float16': k and v are float16 (a float16 KV cache, as llama.cpp keeps it): Uint16Arrays of bits;
   * a Float16Array or a 'float16' tensor says so itself. Computed in float32.
   */
  kvDtype?: 'float32' | 'float16';
  /** Write the output here (q.length values; may be q itself, may not partly overlap it) and return it. */
  out?: Float32Array | Float16ArrayIfAvailable;
}

/** attention's options for tensors: nHeads, nKvHeads, headDim and batch come from the dims (4-D); 3-D q needs nHeads. */
export type TensorAttentionOptions = Omit<AttentionOptions, 'nHeads' | 'headDim'> & { nHeads?: number; headDim?: number };
/** float32 data in (float16 as a Float16Array: computed in float32, rounded back), flat or a tensor. */
export type FloatInput = Float32Array | Float16ArrayIfAvailable | TensorLike | TfTensorLike;
/** k and v: float32, float16 (kvDtype), or tensors. */
export type KvInput = Float32Array | Uint16Array | Float16ArrayIfAvailable | TensorLike | TfTensorLike;

export interface KvCacheOptions {
  nKvHeads: number;
  headDim: number;
  /** Tokens held at most. The storage, 2 · capacity · nKvHeads · headDim values, is allocated once (kTooLarge if it does not fit). */
  capacity: number;
  /** 'float16': keys (rotated in float32 first) and values stored as float16, half the bytes; attention computes in float32. */
  dtype?: 'float32' | 'float16';
  /** RoPE: keys turn at their positions when appended, queries at theirs in attend (frequencies for a context of capacity tokens). */
  rope?: RopeParams | { params?: RopeParams; invFreq?: NumberArray; layout?: RopeLayout; rotaryOffset?: number; precision?: Precision; attentionFactor?: number };
  /**
   * Sliding window (HF's sliding_window): a query at p sees keys at p - window < pos. The cache is
   * then a ring: an append to a full cache evicts the oldest token after the sinks. Needs
   * capacity >= sinkTokens + window (+ qLen - 1 for qLen queries at once).
   */
  window?: number;
  /** StreamingLLM: the first sinkTokens tokens appended are never evicted and stay visible. Needs a window. */
  sinkTokens?: number;
}

export interface KvAttendOptions extends PositionBiasOptions {
  /** Query heads: a multiple of nKvHeads (GQA, MQA). Optional for a tensor q (its dims give it). */
  nHeads: number;
  /** The queries' positions (integers); default: those of the last qLen tokens appended. */
  positions?: NumberArray;
  /** Default true: a key at pos is visible to a query at p iff pos <= p. */
  causal?: boolean;
  /** Default 1 / sqrt(headDim). */
  scale?: number;
  /** > 0: scores become softcap · tanh(score / softcap). */
  softcap?: number;
  /** gpt-oss: one learned logit per head added to every softmax row, carrying no value. */
  sinks?: Float32Array;
  /** Write the output here (q.length floats) and return it. */
  out?: Float32Array;
}

/** A KV cache in the WASM heap (pe.kvCache): free it with delete() (or `using`). */
export interface KvCache {
  /** Tokens held (0 once deleted). */
  readonly length: number;
  readonly capacity: number;
  /** Heap bytes of its keys, values and positions (0 once deleted). */
  readonly bytes: number;
  readonly nKvHeads: number;
  readonly headDim: number;
  readonly dtype: 'float32' | 'float16';
  /**
   * Appends k, v [nTokens][nKvHeads][headDim]; keys turn by RoPE at their positions (default: one
   * after the last appended, 0 first; integers rising across calls). Without a window the cache
   * must have room; with one, the oldest tokens after the sinks are evicted. O(nTokens).
   */
  append(k: FloatInput, v: FloatInput, options?: { positions?: NumberArray }): void;
  /**
   * q [qLen][nHeads][headDim] over every token held → [qLen][nHeads][headDim]; equals pe.attention
   * over the same keys and values. Tensors: [1, qLen, nHeads, headDim] (a cache holds one sequence).
   */
  attend(q: Float32Array, options: KvAttendOptions): Float32Array;
  attend(q: Float16ArrayIfAvailable, options: KvAttendOptions): Float16ArrayIfAvailable;
  attend<T extends ShapedInput>(q: T, options?: Partial<KvAttendOptions>): TensorResult<T>;
  /**
   * llama.cpp's context shift, by position: delta < 0 drops the tokens at positions
   * [keep, keep - delta) (keep: default 0) and moves every later token back by -delta, its key
   * re-rotated by delta with gain 1; delta > 0 moves the tokens at keep or later on. With the
   * default positions 0 … length-1, shift(-n, { keep: length - n }) drops the last n tokens
   * (rejected drafts). Appends go on after the last position held. Refused on a cache with a window.
   */
  shift(delta: number | bigint, options?: { keep?: number | bigint }): void;
  /** The tokens held, oldest first: k, v [length][nKvHeads][headDim] float32 (keys as rotated; float16 widened exactly), positions. */
  read(): { k: Float32Array; v: Float32Array; positions: Float64Array };
  /** Frees its heap memory; a second call does nothing. */
  delete(): void;
  [Symbol.dispose](): void;
}

export interface Posenc {
  /** The SIMD instruction set the kernels were compiled for: "wasm" (SIMD128). */
  readonly simdArch: string;
  /** Threads in use: init's `threads` where shared memory is available, else 1. */
  readonly threads: number;
  /** Same as the package's MAX_ELEMENTS export. */
  readonly MAX_ELEMENTS: number;
  /** Real models' position settings. */
  readonly presets: { about: string; presets: Preset[] };
  /** The names RoPE options take, read from the C++ enums (the lists the argument checks use). */
  readonly names: { ropeScalings: Exclude<RopeScalingType, 'default'>[]; ropeLayouts: RopeLayout[]; precisions: Precision[] };
  /** The WASM heap's size (grows up to 2 GiB, never shrinks) and the bytes allocated in it now. */
  heapStats(): { heapBytes: number; inUseBytes: number };

  /** PE[p][2i] = sin(p / base^(2i/dModel)), PE[p][2i+1] = cos(same); row-major [seqLen][dModel]. */
  sinusoidal(seqLen: number, dModel: number, options?: SinusoidalTableOptions): Float32Array;
  /** M_k [dModel][dModel] with PE(p + k) = M_k · PE(p) for every p (dModel even). */
  sinusoidalShift(k: number | bigint, dModel: number, options?: SinusoidalOptions): Float32Array;
  learnedTable(maxLen: number, dModel: number, options?: LearnedTableOptions): LearnedTable;
  /** E[token] · scale + PE[position], [n][dModel]. */
  embed(tokenIds: NumberArray, options: EmbedOptions): Float32Array;

  ropeFrequencies(params: RopeParams, options?: { seqLen?: number; dtype?: 'float32' }): RopeFrequencies;
  /** The same in float64, as computed (for exact reference angles). */
  ropeFrequencies(params: RopeParams, options: { seqLen?: number; dtype: 'float64' }): Omit<RopeFrequencies, 'invFreq'> & { invFreq: Float64Array };
  ropeParamsFromConfig(config: ConfigJson | string, options?: ConfigOptions): RopeParams;
  /** Reads a .gguf / .safetensors / .npy / config.json without loading the weights. */
  readModel(source: ModelSource, options?: ReadModelOptions): Promise<ModelInfo>;
  /** The ggml_rope_ext parameters llama.cpp uses for params (what precision 'ggml' computes with). */
  ggmlRopeParams(params: RopeParams, options?: { seqLen?: number }): GgmlRopeParams;
  /**
   * Rotates x [seqLen][nHeads][headDim] (tensorLayout 'bhsd': [nHeads][seqLen][headDim], ONNX's 4-D
   * layout; `layout` names the pair layout); returns a new Float32Array, or options.out (x's size; may
   * be x itself) filled. Dims >= rotaryDim pass through.
   */
  applyRope(x: Float32Array, options: ApplyRopeOptions & { out?: Float32Array; tensorLayout?: 'bshd' | 'bhsd' }): Float32Array;
  /** float16 x: rotated in float32, rounded back. */
  applyRope(x: Float16ArrayIfAvailable, options: ApplyRopeOptions & { out?: Float16ArrayIfAvailable; tensorLayout?: 'bshd' | 'bhsd' }): Float16ArrayIfAvailable;
  /** A tensor [batch, seqLen, nHeads, headDim] (tensorLayout 'bhsd': [batch, nHeads, seqLen, headDim]) or 3-D [batch, seqLen, nHeads · headDim] with nHeads. */
  applyRope<T extends ShapedInput>(x: T, options: TensorRopeOptions & { out?: Float32Array | Float16ArrayIfAvailable; tensorLayout?: 'bshd' | 'bhsd' }): TensorResult<T>;
  /** Rotates a heap buffer in place (no copies in or out). */
  applyRopeInPlace(buffer: HeapFloat32, options: ApplyRopeOptions): void;
  allocFloat32(length: number): HeapFloat32;
  /**
   * Moves cached keys k [seqLen][nHeads][headDim], rotated at positions p, to p + delta in place
   * (llama.cpp's context shift): a rotation by delta with gain 1, so the attention factor already in
   * k is kept. The frequencies are the params' at seqLen (or invFreq).
   */
  shiftKeys(k: Float32Array | HeapFloat32, options: ShiftKeysOptions): void;
  /** A tensor's data is shifted in place (not a TF.js tensor: those are immutable). */
  shiftKeys(k: TensorLike, options: Omit<ShiftKeysOptions, 'seqLen' | 'nHeads'> & { seqLen?: number; nHeads?: number }): void;
  /** Llama 4's attention temperature log(floor((p + 1) / floorScale) + 1) · attnScale + 1 at each position. */
  iropeScale(positions: number | bigint, options?: { floorScale?: number; attnScale?: number }): number;
  iropeScale(positions: NumberArray, options?: { floorScale?: number; attnScale?: number }): Float64Array;
  /** Qwen2-VL position ids [3][seqLen] (temporal, height, width rows) for text runs and image grids t × h × w. */
  mropePositions(segments: ({ text: number } | { image: [number, number, number] })[]): Float64Array;
  /**
   * 2-D axial RoPE of vision transformers (Pixtral): x [patches][nHeads][headDim]; the first
   * headDim/4 pairs turn by the patch row (frequencies θ^(-4i/headDim)), the rest by the column.
   */
  applyRope2d(x: Float32Array, options: Rope2dOptions & { nHeads: number; headDim: number }): Float32Array;
  applyRope2d(x: Float16ArrayIfAvailable, options: Rope2dOptions & { nHeads: number; headDim: number }): Float16ArrayIfAvailable;
  /** A tensor [batch, patches, nHeads, headDim]: the same patch positions in every batch row. */
  applyRope2d<T extends ShapedInput>(x: T, options: Rope2dOptions): TensorResult<T>;
  ropeCache(options: RopeCacheOptions): RopeCache;

  /** BLOOM / MPT / ggml slopes, Float32Array(nHeads). */
  alibiSlopes(nHeads: number, options?: { maxBias?: number }): Float32Array;
  /** [nHeads][qLen][kLen] = -slope · |qpos - j|, qpos = queryOffset + i (default: the last qLen positions). */
  alibiBias(nHeads: number, qLen: number, kLen: number, options?: AlibiBiasOptions): Float32Array;
  /** ONNX operators with the semantics of Attention-23/24 and RotaryEmbedding-23. */
  readonly onnx: {
    /** Outputs of Q's kind: an onnxruntime-web (or transformers.js) Tensor for one, else plain OutputTensors. */
    attention<T extends ShapedInput>(inputs: OnnxAttentionInputs<T>, attrs?: OnnxAttentionAttrs, options?: OnnxAttentionOptions): Partial<Record<AttentionOutputSlot, TensorResult<T>>> & { Y: TensorResult<T> };
    /** Y of X's kind. options.out: write Y into this array (X's size; may be X's own data) instead of a new one. */
    rotaryEmbedding<T extends ShapedInput>(inputs: OnnxRotaryEmbeddingInputs<T>, attrs?: OnnxRotaryEmbeddingAttrs, options?: OnnxRotaryEmbeddingOptions): { Y: TensorResult<T> };
  };
  /**
   * q [batch][qLen][nHeads][headDim], k and v [batch][kvLen][nKvHeads][headDim] → q's shape (layout
   * 'bhsd': heads major); batch defaults to 1. A float16 q (Float16Array) gives a Float16Array.
   */
  attention(q: Float32Array, k: KvInput, v: KvInput, options: AttentionOptions & { returnWeights: true }): { output: Float32Array; weights: Float32Array };
  attention(q: Float32Array, k: KvInput, v: KvInput, options: AttentionOptions): Float32Array;
  attention(q: Float16ArrayIfAvailable, k: KvInput, v: KvInput, options: AttentionOptions): Float16ArrayIfAvailable;
  /** Tensors (4-D as the layout says, or 3-D [batch, qLen, nHeads · headDim] with nHeads): the result of q's kind. */
  attention<T extends ShapedInput>(q: T, k: KvInput, v: KvInput, options: TensorAttentionOptions & { returnWeights: true }): { output: TensorResult<T>; weights: TensorResult<T> };
  attention<T extends ShapedInput>(q: T, k: KvInput, v: KvInput, options?: TensorAttentionOptions): TensorResult<T>;

  /** A KV cache for decoding, in the heap: keys rotated once when appended, attention for a few new queries (docs/decoding.md). */
  kvCache(options: KvCacheOptions): KvCache;

  /** HF T5 bucket of relativePosition = key - query. */
  t5Bucket(relativePosition: number | bigint, options?: T5BucketOptions): number;
  t5Bucket(relativePosition: NumberArray, options?: T5BucketOptions): Int32Array;
  /** [nHeads][qLen][kLen] from table [numBuckets][nHeads]. */
  t5Bias(table: Float32Array, nHeads: number, qLen: number, kLen: number, options?: T5BiasOptions): Float32Array;
}

/** Loads and instantiates the WebAssembly module. Call once and keep the result. */
export declare function init(options?: InitOptions): Promise<Posenc>;

export interface WorkerInitOptions extends InitOptions {
  /**
   * Transfer the inputs' buffers to the worker instead of copying them (default false): no copy,
   * but the arrays you passed are detached (empty) afterwards. Results are always transferred.
   */
  transfer?: boolean;
}

type Async<F extends (...args: any) => any> = (...args: Parameters<F>) => Promise<Awaited<ReturnType<F>>>;

/**
 * The worker form (initWorker): init's functions whose results are data, asynchronous, run by a
 * posenc module in a module Web Worker (browsers) or a worker thread (Node), results bit for bit the
 * direct calls' and of the same kind. Not here: allocFloat32 / applyRopeInPlace, kvCache,
 * learnedTable and the lab (objects held in the worker's heap), and options.out (results are
 * transferred to you, not copied into your array).
 */
export interface PosencWorker {
  readonly simdArch: string;
  readonly threads: number;
  readonly MAX_ELEMENTS: number;
  readonly names: Posenc['names'];
  sinusoidal: Async<Posenc['sinusoidal']>;
  sinusoidalShift: Async<Posenc['sinusoidalShift']>;
  embed: Async<Posenc['embed']>;
  ropeFrequencies(params: RopeParams, options?: { seqLen?: number; dtype?: 'float32' }): Promise<RopeFrequencies>;
  ropeFrequencies(params: RopeParams, options: { seqLen?: number; dtype: 'float64' }): Promise<Omit<RopeFrequencies, 'invFreq'> & { invFreq: Float64Array }>;
  ggmlRopeParams: Async<Posenc['ggmlRopeParams']>;
  ropeParamsFromConfig: Async<Posenc['ropeParamsFromConfig']>;
  readModel: Async<Posenc['readModel']>;
  applyRope(x: Float32Array, options: ApplyRopeOptions & { tensorLayout?: 'bshd' | 'bhsd' }): Promise<Float32Array>;
  applyRope(x: Float16ArrayIfAvailable, options: ApplyRopeOptions & { tensorLayout?: 'bshd' | 'bhsd' }): Promise<Float16ArrayIfAvailable>;
  applyRope<T extends ShapedInput>(x: T, options: TensorRopeOptions & { tensorLayout?: 'bshd' | 'bhsd' }): Promise<TensorResult<T>>;
  /** Shifts k in place, as the direct call: the worker shifts a copy, copied back into k. */
  shiftKeys(k: Float32Array | TensorLike, options: Omit<ShiftKeysOptions, 'seqLen' | 'nHeads'> & { seqLen?: number; nHeads?: number }): Promise<void>;
  iropeScale(positions: number | bigint, options?: { floorScale?: number; attnScale?: number }): Promise<number>;
  iropeScale(positions: NumberArray, options?: { floorScale?: number; attnScale?: number }): Promise<Float64Array>;
  mropePositions: Async<Posenc['mropePositions']>;
  applyRope2d(x: Float32Array, options: Rope2dOptions & { nHeads: number; headDim: number }): Promise<Float32Array>;
  applyRope2d<T extends ShapedInput>(x: T, options: Rope2dOptions): Promise<TensorResult<T>>;
  ropeCache: Async<Posenc['ropeCache']>;
  alibiSlopes: Async<Posenc['alibiSlopes']>;
  alibiBias: Async<Posenc['alibiBias']>;
  attention(q: Float32Array, k: KvInput, v: KvInput, options: Omit<AttentionOptions, 'out'> & { returnWeights: true }): Promise<{ output: Float32Array; weights: Float32Array }>;
  attention(q: Float32Array, k: KvInput, v: KvInput, options: Omit<AttentionOptions, 'out'>): Promise<Float32Array>;
  attention(q: Float16ArrayIfAvailable, k: KvInput, v: KvInput, options: Omit<AttentionOptions, 'out'>): Promise<Float16ArrayIfAvailable>;
  attention<T extends ShapedInput>(q: T, k: KvInput, v: KvInput, options: Omit<TensorAttentionOptions, 'out'> & { returnWeights: true }): Promise<{ output: TensorResult<T>; weights: TensorResult<T> }>;
  attention<T extends ShapedInput>(q: T, k: KvInput, v: KvInput, options?: Omit<TensorAttentionOptions, 'out'>): Promise<TensorResult<T>>;
  t5Bucket(relativePosition: number | bigint, options?: T5BucketOptions): Promise<number>;
  t5Bucket(relativePosition: NumberArray, options?: T5BucketOptions): Promise<Int32Array>;
  t5Bias: Async<Posenc['t5Bias']>;
  readonly onnx: {
    attention<T extends ShapedInput>(inputs: OnnxAttentionInputs<T>, attrs?: OnnxAttentionAttrs, options?: Omit<OnnxAttentionOptions, 'out'>): Promise<Partial<Record<AttentionOutputSlot, TensorResult<T>>> & { Y: TensorResult<T> }>;
    rotaryEmbedding<T extends ShapedInput>(inputs: OnnxRotaryEmbeddingInputs<T>, attrs?: OnnxRotaryEmbeddingAttrs, options?: Omit<OnnxRotaryEmbeddingOptions, 'out'>): Promise<{ Y: TensorResult<T> }>;
  };
  /** Ends the worker; calls still pending reject. */
  terminate(): void;
}

/** Loads posenc in a Web Worker (browsers) or a worker thread (Node): the worker form of init(). */
export declare function initWorker(options?: WorkerInitOptions): Promise<PosencWorker>;

// ---- The extrapolation lab (pe.lab; js/lab.js) ---------------------------------------

export type LabScheme = 'none' | 'sinusoidal' | 'learned' | 'rope' | 'alibi' | 't5' | 'xpos' | 'kerple_log' | 'kerple_power' | 'fire' | 'cope' | 'p_rope' | 'irope' | 'nope_interval' | 'gemma3' | 'swa_rope_nope';
export type LabTask = 'markov' | 'copy' | 'flipflop' | 'text';
export type LabRopeScaling = 'none' | 'linear' | 'ntk' | 'dynamic' | 'yarn';

export interface LabModelOptions {
  vocabSize?: number;    // 32
  dModel?: number;       // 64
  nLayers?: number;      // 2
  nHeads?: number;       // 4
  trainLength?: number;  // 64: the original length for RoPE scaling
  /** trainLength: positions given to the model are below it (rows of pos_emb); at most 65536. */
  maxPositions?: number;
  scheme?: LabScheme;    // 'rope'
  seed?: number;         // 0
}

export interface LabTensorInfo {
  name: string;          // 'tok_emb', 'pos_emb', 't5_bias', 'blocks.{l}.wq', ..., 'ln_f.bias'
  shape: number[];       // [in][out] for matrices, [d] for LayerNorm
}

export interface LabEvaluation {
  /** Mean next-token loss in nats; null (with noEmbedding) for learned beyond maxPositions. */
  loss: number | null;
  noEmbedding: boolean;
  /** [length - 1]: the mean over rows of the loss of predicting token t + 1. */
  positionLoss: Float64Array | null;
}

export type LabPositionParameters = Record<string, { shape: number[]; values: Float32Array }>;

/** A model in the WASM heap: free it with delete() (or `using`). */
export interface LabModel {
  readonly config: Required<LabModelOptions>;
  readonly steps: number;
  readonly tensors: LabTensorInfo[];
  /**
   * What the model learned about positions (docs/lab.md, "Position parameters"): learned pos_emb; t5 t5_bias;
   * kerple_log and kerple_power r1, r2 (after softplus / 2·sigmoid); fire blocks.{l}.fire.c and .L (after
   * softplus) and .f [65][nHeads] (f(k/64) at row k); cope blocks.{l}.cope.e [trainLength + 1][dModel].
   * {} for none, sinusoidal, rope, alibi, xpos, p_rope, irope, nope_interval, gemma3 and swa_rope_nope.
   */
  positionParameters(): LabPositionParameters;
  /**
   * tokens: batch × length ids (length defaults to trainLength). One AdamW step; the loss before it.
   * positions: one per token (default 0 … length − 1 in each row), strictly increasing along a row, below maxPositions.
   */
  trainStep(tokens: Int32Array | number[], options?: { lr?: number; length?: number; positions?: Int32Array | number[] }): number;
  lossAndGradients(tokens: Int32Array | number[], options?: { length?: number; positions?: Int32Array | number[] }): { loss: number; gradients: Record<string, Float32Array> };
  /** ropeScaling (rope and xpos only; factor max(1, length / trainLength), dynamic 2): on the rotation, YaRN's attention factor included; xPos's decay is not scaled. */
  evaluate(tokens: Int32Array | number[], options?: { length?: number; ropeScaling?: LabRopeScaling }): LabEvaluation;
  /** safetensors bytes (F32; metadata.config is the JSON of config). */
  exportWeights(): Uint8Array;
  loadWeights(bytes: Uint8Array): void;
  delete(): void;
  [Symbol.dispose](): void;
}

export interface LabDatasetOptions {
  task?: LabTask;            // 'markov'
  seed?: number;             // 0: markov's transition table
  vocabSize?: number;        // 32 (markov, copy)
  peak?: number;             // 3: markov rows ∝ exp(peak · z)
  text?: string | Uint8Array;  // task 'text'
}

export interface LabDataset {
  readonly task: LabTask;
  readonly vocabSize: number;
  /** markov: the exact entropy rate (nats/token); null otherwise. */
  readonly entropyRate: number | null;
  /** The least expected mean loss of a row of this length (null if unknown). */
  floor(length: number): number | null;
  /** Int32Array [batch][length], a function of (dataset, seed): a number below 2^53 or a bigint below 2^64. */
  sample(batch: number, length: number, seed?: number | bigint): Int32Array;
  delete(): void;
  [Symbol.dispose](): void;
}

export interface LabRunOptions {
  task?: LabTask;
  text?: string | Uint8Array;
  vocabSize?: number;
  schemes?: 'all' | LabScheme[];
  steps?: number;            // 2000
  size?: 'small' | 'tiny';   // dModel 64 / 4 heads, or 32 / 2 heads; 2 layers
  dModel?: number;
  nLayers?: number;
  nHeads?: number;
  trainLength?: number;      // 64
  batch?: number;            // 16
  evalBatch?: number;        // 16
  lr?: number;               // 1e-2 (peak)
  warmupSteps?: number;      // steps / 20
  seed?: number;             // 1
  /** Runs per scheme, with seeds seed … seed + seeds − 1 for init and batch order (the task's data stays seed's); 1 */
  seeds?: number;
  /** The task's data (the Markov table) from this seed; seed. run({ seed: S + k, taskSeed: S }) is seed S + k's part of run({ seed: S, seeds: N }). */
  taskSeed?: number;
  /** Randomized positions (Ruoss et al. 2023): 0 (off) or L_max in [trainLength, 65536]; training rows at sorted random subsets of [0, L_max). */
  randomPositions?: number;
}

export interface LabEvalRow {
  length: number;
  ropeScaling: 'none' | 'linear' | 'ntk' | 'dynamic' | 'yarn';
  noEmbedding: boolean;
  loss: number | null;
  floor: number | null;
  bucketWidth: number;
  bucketLoss: (number | null)[];
}

export interface LabRunResult {
  task: LabTask;
  config: Record<string, number>;
  entropyRate: number | null;
  floor: Record<string, number | null>;
  /** Per scheme, then per seed. clippedSteps: the training steps whose global gradient norm was above 1 (and was clipped). */
  /** position: the trained model's position parameters by name, as LabModel.positionParameters() returns them ({} for the schemes without). */
  results: { scheme: LabScheme; seed: number; trainSeconds: number; trainLoss: Float32Array; clippedSteps: number;
    position: LabPositionParameters; eval: LabEvalRow[] }[];
}

export interface LabExtendOptions extends Omit<LabRunOptions, 'schemes' | 'randomPositions'> {
  schemes?: 'all' | ('rope' | 'xpos')[];  // 'all': rope and xpos
  /** L = factor · trainLength, the length fine-tuned at and the scalings' factor; 4 */
  factor?: number;
  /** Fine-tuning steps after which L and 2·L are evaluated, ascending; [0, 25, 100, 400] (0: inference-time scaling only) */
  checkpoints?: number[];
}

export interface LabExtendResult {
  task: LabTask;
  config: Record<string, number | number[]>;
  entropyRate: number | null;
  /** The floor at L and 2·L. */
  floor: Record<string, number | null>;
  /** Per scheme, then per seed: the base run's loss per step, each scaling's fine-tuning loss per step, and the evaluations. */
  results: { scheme: 'rope' | 'xpos'; seed: number; seconds: number; trainLoss: Float32Array;
    tuneLoss: Record<'none' | 'linear' | 'ntk' | 'yarn', Float32Array>;
    rows: { ropeScaling: 'none' | 'linear' | 'ntk' | 'yarn'; steps: number; length: number; loss: number }[] }[];
}

export interface Lab {
  readonly schemes: LabScheme[];
  readonly tasks: LabTask[];
  readonly ropeScalings: LabRopeScaling[];
  createModel(options?: LabModelOptions): LabModel;
  dataset(options?: LabDatasetOptions): LabDataset;
  /** Trains and evaluates each scheme (synchronous: call it in a worker). onProgress returning false cancels. */
  run(options?: LabRunOptions, onProgress?: (p: { scheme: LabScheme; seed: number; step: number; totalSteps: number; loss: number }) => boolean | void): LabRunResult;
  /** Context extension by fine-tuning (docs/lab.md): run()'s model per scheme and seed, then a copy fine-tuned at factor · trainLength per scaling. Synchronous. */
  extend(options?: LabExtendOptions, onProgress?: (p: { scheme: LabScheme; seed: number; step: number; totalSteps: number; loss: number }) => boolean | void): LabExtendResult;
  /** The seed of stream `index` of `seed`: run() samples training batch s with streamSeed(seed, s), the evaluation rows at length L with streamSeed(7, L). */
  streamSeed(seed: number | bigint, index: number): bigint;
  /** Int32Array [batch][length]: each row a sorted uniform subset of [0, maxPosition); run() draws batch s with streamSeed(seed + 2^32, s). */
  randomPositions(batch: number, length: number, maxPosition: number, seed: number | bigint): Int32Array;
}

export interface Posenc {
  /** The extrapolation lab: tiny transformers per positional scheme (docs/lab.md). */
  readonly lab: Lab;
}
