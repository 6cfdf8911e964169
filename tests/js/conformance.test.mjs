// The shared ONNX backend vectors through the npm API (pe.onnx.*), at the ONNX tolerance.
// They are third-party data: read in place from ../shared/conformance (or $POSENC_CONFORMANCE_DIR).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pe } from './helpers.mjs';

const dir = process.env.POSENC_CONFORMANCE_DIR || fileURLToPath(new URL('../../../shared/conformance', import.meta.url));
const available = existsSync(`${dir}/onnx/test_attention_4d.json`);
const skip = available ? false : `no ONNX vectors at ${dir}/onnx (set POSENC_CONFORMANCE_DIR)`;
if (!available) console.log(`conformance: SKIPPED, ${skip}`);

function decode(v) {
  return v === '-inf' ? -Infinity : v === 'inf' ? Infinity : v === 'nan' ? NaN : v;
}

// Half bits of a value that is exactly a float16 (the vectors store halves exactly), and back.
function halfBits(v) {
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a === Infinity) return sign | 0x7c00;
  if (a === 0) return sign;
  const e = Math.floor(Math.log2(a));
  if (e < -14) return sign | Math.round(a * 2 ** 24);
  return sign | ((e + 15) << 10) | Math.round((a / 2 ** e - 1) * 1024);
}
function halfValue(h) {
  const exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const mag = exp === 0 ? mant * 2 ** -24 : exp === 31 ? (mant ? NaN : Infinity) : (1 + mant / 1024) * 2 ** (exp - 15);
  return h & 0x8000 ? -mag : mag;
}

// A tensor as an ONNX Runtime Tensor would present it: { data, dims, type } (float16: Uint16Array bits).
function tensor(t) {
  const data = t.dtype === 'float32' ? Float32Array.from(t.data, decode)
    : t.dtype === 'float16' ? Uint16Array.from(t.data, (x) => halfBits(decode(x)))
    : t.dtype === 'bool' ? Uint8Array.from(t.data, (b) => (b ? 1 : 0))
      : t.dtype === 'int64' ? BigInt64Array.from(t.data, (x) => BigInt(x)) : null;
  return { data, dims: t.dims, type: t.dtype };
}

test('conformance: every shared ONNX case through pe.onnx.* within |a - e| <= 1e-7 + 1e-3 |e|', { skip }, () => {
  const files = readdirSync(`${dir}/onnx`).filter((f) => f.endsWith('.json')).sort();
  assert.ok(files.length >= 80);
  let run = 0, worst = 0, halves = 0;
  for (const file of files) {
    const c = JSON.parse(readFileSync(`${dir}/onnx/${file}`, 'utf8'));
    const fp16 = c.inputs.some((t) => t.present && t.dtype === 'float16');
    halves += fp16 ? 1 : 0;
    const inputs = {};
    for (const t of c.inputs) if (t.present) inputs[t.slot] = tensor(t);
    const result = c.op === 'RotaryEmbedding'
      ? pe.onnx.rotaryEmbedding(inputs, c.attributes)
      : pe.onnx.attention(inputs, c.attributes, { outputs: c.node_outputs.map((name, i) => (name ? c.outputs[i].slot : '')), opset: c.opset });
    for (const want of c.outputs.filter((t) => t.present)) {
      const got = result[want.slot];
      assert.ok(got, `${c.name}: missing ${want.slot}`);
      assert.deepEqual(got.dims, want.dims, `${c.name}: ${want.slot} dims`);
      assert.equal(got.type, want.dtype, `${c.name}: ${want.slot} type`);
      if (fp16) got.data = Float32Array.from(got.data, halfValue);
      const e = Float32Array.from(want.data, decode);
      for (let i = 0; i < e.length; i++) {
        if (!Number.isFinite(e[i]) || !Number.isFinite(got.data[i])) {
          assert.equal(got.data[i], e[i], `${c.name}: ${want.slot}[${i}]`);
          continue;
        }
        const ratio = Math.abs(got.data[i] - e[i]) / (c.tolerance.atol + c.tolerance.rtol * Math.abs(e[i]));
        worst = Math.max(worst, ratio);
        assert.ok(ratio <= 1, `${c.name}: ${want.slot}[${i}] = ${got.data[i]}, expected ${e[i]}`);
      }
    }
    run++;
  }
  console.log(`conformance: ${run} ONNX cases passed through the npm API, ${halves} of them float16 ` +
    `(worst ${worst.toExponential(2)} of the tolerance)`);
  assert.equal(run, files.length);
});
