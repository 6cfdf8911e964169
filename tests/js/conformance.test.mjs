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

// A tensor as an ONNX Runtime Tensor would present it: { data, dims, type }.
function tensor(t) {
  const data = t.dtype === 'float32' ? Float32Array.from(t.data, decode)
    : t.dtype === 'bool' ? Uint8Array.from(t.data, (b) => (b ? 1 : 0))
      : t.dtype === 'int64' ? BigInt64Array.from(t.data, (x) => BigInt(x)) : null;
  return { data, dims: t.dims, type: t.dtype };
}

test('conformance: every shared ONNX case through pe.onnx.* within |a - e| <= 1e-7 + 1e-3 |e|', { skip }, () => {
  const files = readdirSync(`${dir}/onnx`).filter((f) => f.endsWith('.json')).sort();
  assert.ok(files.length >= 80);
  let run = 0, worst = 0;
  const skipped = [];
  for (const file of files) {
    const c = JSON.parse(readFileSync(`${dir}/onnx/${file}`, 'utf8'));
    if (c.inputs.some((t) => t.present && t.dtype === 'float16')) {
      skipped.push(c.name);
      continue;
    }
    const inputs = {};
    for (const t of c.inputs) if (t.present) inputs[t.slot] = tensor(t);
    const result = c.op === 'RotaryEmbedding'
      ? pe.onnx.rotaryEmbedding(inputs, c.attributes)
      : pe.onnx.attention(inputs, c.attributes, { outputs: c.node_outputs.map((name, i) => (name ? c.outputs[i].slot : '')), opset: c.opset });
    for (const want of c.outputs.filter((t) => t.present)) {
      const got = result[want.slot];
      assert.ok(got, `${c.name}: missing ${want.slot}`);
      assert.deepEqual(got.dims, want.dims, `${c.name}: ${want.slot} dims`);
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
  console.log(`conformance: ${run} ONNX cases passed through the npm API (worst ${worst.toExponential(2)} of the tolerance); ` +
    `${skipped.length} float16 cases skipped, posenc computes in float32: ${skipped.join(', ')}`);
  assert.equal(run + skipped.length, files.length);
});
