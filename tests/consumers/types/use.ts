// Type check (tsc --noEmit) of every export of the package as a TypeScript user writes it.
import { init, initWorker, isPosencError, PosencRangeError, PosencTypeError, MAX_ELEMENTS, type Posenc, type PosencWorker, type StatusCodeName, type RopeParams, type HeapFloat32, type OutputTensor, type ModelInfo, type GgmlRopeParams,
  type LabModel, type LabEvaluation, type LabDataset, type LabRunResult, type KvCache } from 'posenc';

const pe: Posenc = await init();
const limit: number = MAX_ELEMENTS + pe.MAX_ELEMENTS;
const arch: string = pe.simdArch;
const threaded: Posenc = await init({ threads: 2 });
const threads: number = threaded.threads + pe.threads;
const stats: { heapBytes: number; inUseBytes: number } = pe.heapStats();

const table: Float32Array = pe.sinusoidal(100, 128, { base: 10000, layout: 'concat', positions: new Float64Array(100) });
const shift: Float32Array = pe.sinusoidalShift(5, 128);
const learned = pe.learnedTable(512, 768, { seed: 1, std: 0.02, offset: 2 });
const rows: Float32Array = learned.lookup([0, 1, 2]);
const embedded: Float32Array = pe.embed([1, 2], { tokenEmbeddings: learned.weights, dModel: 768, positionTable: table, scale: 1 });

const params: RopeParams = pe.ropeParamsFromConfig({ head_dim: 128 }, { layerType: 'full_attention', dialect: 'hf' });
const llama: RopeParams = { headDim: 128, theta: 500000, scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } };
const f32: Float32Array = pe.ropeFrequencies(llama, { seqLen: 8192 }).invFreq;
const f64: Float64Array = pe.ropeFrequencies(llama, { dtype: 'float64' }).invFreq;
const rotated: Float32Array = pe.applyRope(new Float32Array(16), { seqLen: 2, nHeads: 1, params, layout: 'interleaved', precision: 'accurate', offset: 3 });
const heap: HeapFloat32 = pe.allocFloat32(16);
pe.applyRopeInPlace(heap, { seqLen: 2, nHeads: 1, headDim: 8, invFreq: f32.subarray(0, 4), positions: [0, 1] });
const view: Float32Array = heap.array;
heap.delete();
const { cos, sin, rotaryDim } = pe.ropeCache({ params, seqLen: 4 });

const slopes: Float32Array = pe.alibiSlopes(12, { maxBias: 8 });
const alibi: Float32Array = pe.alibiBias(12, 1, 64, { causal: true });
const bucket: number = pe.t5Bucket(-3, { bidirectional: false, numBuckets: 32, maxDistance: 128 });
const buckets: Int32Array = pe.t5Bucket([-3, 0, 3]);
const t5: Float32Array = pe.t5Bias(new Float32Array(32 * 12), 12, 4, 4, { queryOffset: 0 });
const alibi0: Float32Array = pe.alibiBias(12, 4, 4, { causal: false, queryOffset: 0 });
const model: ModelInfo = await pe.readModel(new Uint8Array(8), { tableName: 'wpe.weight', maxTableFloats: 1 << 20 });
const modelParams: RopeParams | undefined = model.rope?.params;
const table2: Float32Array | null | undefined = model.positionTable?.weights;
const ggml: GgmlRopeParams = pe.ggmlRopeParams({ headDim: 64, freqFactors: [1, 2], scaling: { type: 'longrope', contextLength: 8192 } });
const viaGgml: Float32Array = pe.applyRope(new Float32Array(16), { seqLen: 2, nHeads: 1, params, precision: 'ggml' });

const out: Float32Array = pe.attention(new Float32Array(8), new Float32Array(8), new Float32Array(8), { nHeads: 1, headDim: 8, causal: true, alibi: true, rope: llama, t5: { table: new Float32Array(32) }, mask: new Float32Array(1), scale: 0.1, softcap: 30 });
const { output, weights } = pe.attention(new Float32Array(8), new Float32Array(8), new Float32Array(8), { nHeads: 1, headDim: 8, returnWeights: true });
const onnx = pe.onnx.attention(
  { Q: { data: new Float32Array(8), dims: [1, 1, 1, 8] }, K: { data: new Float32Array(8), dims: [1, 1, 1, 8] }, V: { data: new Float32Array(8), dims: [1, 1, 1, 8] },
    attn_mask: { data: new Uint8Array(1), dims: [1, 1] }, nonpad_kv_seqlen: { data: new BigInt64Array(1), dims: [1] } },
  { is_causal: 1, q_num_heads: 1, kv_num_heads: 1, qk_matmul_output_mode: 3, scale: 0.5, softcap: 0, softmax_precision: 1 },
  { outputs: ['Y', '', '', 'qk_matmul_output'], opset: 24 });
const y: OutputTensor = onnx.Y;
const qk: OutputTensor | undefined = onnx.qk_matmul_output;
const rot: OutputTensor = pe.onnx.rotaryEmbedding(
  { X: { data: new Float32Array(8), dims: [1, 1, 1, 8] }, cos_cache: { data: new Float32Array(4), dims: [1, 4] }, sin_cache: { data: new Float32Array(4), dims: [1, 4] }, position_ids: { data: [0], dims: [1, 1] } },
  { interleaved: 0, num_heads: 1, rotary_embedding_dim: 8 }).Y;
const presetIds: string[] = pe.presets.presets.map((p) => p.id);

// @ts-expect-error: seqLen must be a number
pe.sinusoidal('100', 128);
// @ts-expect-error: an unknown scaling type
pe.ropeFrequencies({ headDim: 8, scaling: { type: 'xpos' } });

pe.shiftKeys(new Float32Array(16), { seqLen: 2, nHeads: 1, headDim: 8, delta: -4, params: { headDim: 8 } });
const mpos: Float64Array = pe.mropePositions([{ text: 2 }, { image: [1, 2, 2] }]);
const vis: Float32Array = pe.applyRope2d(new Float32Array(64), { nHeads: 1, headDim: 16, grid: [2, 2] });
const windowed: Float32Array = pe.attention(new Float32Array(8), new Float32Array(8), new Float32Array(8), { nHeads: 1, headDim: 4, causal: true, window: 128, sinkTokens: 4, sinks: new Float32Array(1) });
export { limit, arch, threads, stats, shift, rows, embedded, rotated, view, cos, sin, rotaryDim, slopes, alibi, bucket, buckets, t5, out, output, weights, y, qk, rot, presetIds, f64, alibi0, model, modelParams, table2, ggml, viaGgml, windowed, mpos, vis };

// The extrapolation lab.
const labModel: LabModel = pe.lab.createModel({ vocabSize: 8, dModel: 16, nLayers: 1, nHeads: 2, trainLength: 8, scheme: 'alibi', seed: 1 });
const labLoss: number = labModel.trainStep(new Int32Array(16), { lr: 1e-3 });
const labGrads: Record<string, Float32Array> = labModel.lossAndGradients([0, 1, 2, 3, 4, 5, 6, 7]).gradients;
const labEval: LabEvaluation = labModel.evaluate(new Int32Array(32), { length: 32 });
const labBytes: Uint8Array = labModel.exportWeights();
labModel.loadWeights(labBytes);
labModel.delete();
const labData: LabDataset = pe.lab.dataset({ task: 'markov', seed: 1 });
const labRows: Int32Array = labData.sample(2, 16, 3);
const labFloor: number | null = labData.floor(16);
labData.delete();
const labRun: LabRunResult = pe.lab.run({ schemes: ['rope'], steps: 1, size: 'tiny', trainLength: 8 }, (p) => p.step < 10);
void [labLoss, labGrads, labEval, labRows, labFloor, labRun];

// The KV cache.
const cache: KvCache = pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 16, dtype: 'float16', rope: { params: { headDim: 8 }, precision: 'ggml' } });
cache.append(new Float32Array(8), new Float32Array(8), { positions: [0] });
const decoded: Float32Array = cache.attend(new Float32Array(16), { nHeads: 2, alibi: { maxBias: 8 }, softcap: 30, sinks: new Float32Array(2) });
cache.shift(-1, { keep: 0 });
const held: { k: Float32Array; v: Float32Array; positions: Float64Array } = cache.read();
const cacheBytes: number = cache.bytes + cache.length + cache.capacity;
cache.delete();
// @ts-expect-error: dtype is float32 or float16
pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 16, dtype: 'bfloat16' });
// @ts-expect-error: attend needs nHeads
cache.attend(new Float32Array(8), {});
void [decoded, held, cacheBytes];

// The worker form.
const pw: PosencWorker = await initWorker({ threads: 2, transfer: true });
const wy: Float32Array = await pw.attention(new Float32Array(8), new Float32Array(8), new Float32Array(8), { nHeads: 1, headDim: 8, causal: true });
const wr: Float32Array = await pw.applyRope(new Float32Array(8), { seqLen: 1, nHeads: 1, params: { headDim: 8 } });
const wm: ModelInfo = await pw.readModel(new Uint8Array(8));
await pw.shiftKeys(new Float32Array(8), { seqLen: 1, nHeads: 1, delta: 1, params: { headDim: 8 } });
const wo: OutputTensor = (await pw.onnx.attention({ Q: { data: new Float32Array(8), dims: [1, 1, 1, 8] }, K: { data: new Float32Array(8), dims: [1, 1, 1, 8] }, V: { data: new Float32Array(8), dims: [1, 1, 1, 8] } })).Y;
pw.terminate();
// @ts-expect-error: the worker form takes no out (results are transferred)
pw.attention(new Float32Array(8), new Float32Array(8), new Float32Array(8), { nHeads: 1, headDim: 8, out: new Float32Array(8) });
void [wy, wr, wm, wo];

// Tensors, batch, errors.
const plainQ = { data: new Float32Array(2 * 3 * 4 * 8), dims: [2, 3, 4, 8] };
const shaped: OutputTensor = pe.attention(plainQ, plainQ, plainQ, { causal: true });
const batched: Float32Array = pe.attention(plainQ.data, plainQ.data, plainQ.data, { nHeads: 4, headDim: 8, batch: 2 });
const roped: OutputTensor = pe.applyRope(plainQ, { params: { headDim: 8 }, positions: BigInt64Array.of(0n, 1n, 2n), offset: undefined });
const later: Float32Array = pe.applyRope(plainQ.data, { seqLen: 3, nHeads: 4, batch: 2, params: { headDim: 8 }, offset: 100n });
try {
  pe.sinusoidal(0, 8);
} catch (e) {
  if (isPosencError(e)) { const code: StatusCodeName = e.code; void code; }
  if (e instanceof PosencRangeError || e instanceof PosencTypeError) { const m: string = e.message; void m; }
}
// @ts-expect-error: readModel reads no number
pe.readModel(42);
void [shaped, batched, roped, later];
