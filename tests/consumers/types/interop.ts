// Type check of posenc beside the packages it meets, as their users write it (tsconfig.interop.json:
// the DOM and Float16Array in the lib; the libraries' own declarations not checked): onnxruntime-web
// and transformers.js tensors come back as themselves, TF.js tensors as OutputTensor, a File is a
// ModelSource, and a Float16Array gives a Float16Array.
import * as ort from 'onnxruntime-web';
import type * as tf from '@tensorflow/tfjs';
import { init, type ModelInfo, type OutputTensor } from 'posenc';

const pe = await init();
const q = new ort.Tensor('float32', new Float32Array(2 * 4 * 3 * 8), [2, 4, 3, 8]);
const y: ort.Tensor = pe.attention(q, q, q, { causal: true, layout: 'bhsd' });
const { output, weights }: { output: ort.Tensor; weights: ort.Tensor } = pe.attention(q, q, q, { returnWeights: true });
const r: ort.Tensor = pe.applyRope(q, { params: { headDim: 8 }, tensorLayout: 'bhsd' });
const Y: ort.Tensor = pe.onnx.attention({ Q: q, K: q, V: q }, { is_causal: 1 }).Y;

declare const t: tf.Tensor;
const fromTf: OutputTensor = pe.attention(t, t, t, { causal: true });

// transformers.js's Tensor: new Tensor(type, data, dims), with type, data and dims.
declare class TransformersTensor { constructor(type: string, data: Float32Array, dims: number[]); readonly type: string; readonly data: Float32Array; readonly dims: number[] }
const hf: TransformersTensor = pe.applyRope(new TransformersTensor('float32', new Float32Array(8), [1, 1, 1, 8]), { params: { headDim: 8 } });

declare const file: File;
const model: Promise<ModelInfo> = pe.readModel(file);
const half: Float16Array = pe.applyRope(new Float16Array(8), { seqLen: 1, nHeads: 1, params: { headDim: 8 } });
// @ts-expect-error: a Map is not a config.json
pe.readModel(new Map());
void [y, output, weights, r, Y, fromTf, hf, model, half];
