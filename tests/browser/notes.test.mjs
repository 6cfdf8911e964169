// What views say in words at the ends of their controls (a learner's review found each of these
// false or silent): one-hot's comparison with the last position, a pair past the last one in shift
// and rope-rotation, the NTK cos/sin cache's size against the in-production view's, dim-traces'
// reasons for a dimension not drawn. Node runs the views' compute with the real package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from 'posenc';
import { defaults } from '../../web/settings/state.js';
import { pairRule } from '../../web/views/shared/pairs.js';

const pe = await init();
const lab = { shippedResult: () => null, shippedFailure: () => 'none', result: () => null, onChange() {} };
async function viewAt(id, settings) {
  const view = (await import(`../../web/views/${id}.js`)).default;
  const memo = new Map(), st = { ...defaults(), ...settings };
  const ctx = { pe, st, extras: {}, lab, redraw() {}, memo: (k, f) => { if (!memo.has(k)) memo.set(k, f()); return memo.get(k); } };
  const data = view.compute(ctx);
  return { data, note: view.note?.(data) ?? '', html: view.html?.(data, ctx) ?? '' };
}

test('one-hot compares a position with its neighbour and the far end, never with itself', async () => {
  const last = await viewAt('one-hot', { seqLen: 100, hotPos: 63 });
  assert.match(last.note, /Any two positions are orthogonal: 63 is as unlike 62 as 0 \(similarity 0 for both\)/);
  assert.match(last.note, /PE\(63\)·PE\(62\) \/ 64 = [\d.]+, PE\(63\)·PE\(0\) \/ 64 = /);
  assert.match((await viewAt('one-hot', { seqLen: 1000, hotPos: 10 })).note, /10 is as unlike 11 as 63 /);
  assert.match((await viewAt('one-hot', { seqLen: 20, hotPos: 40 })).note,
    /19 \(compare position 40 is past the positions shown: 19, the last, is drawn\) is as unlike 18 as 0/);
  const one = await viewAt('one-hot', { seqLen: 1 });
  assert.match(one.note, /^One-hot: 1 position needs 1 dimension .* With one position there is no other to compare it with/);
  assert.match((await viewAt('one-hot', { seqLen: 2, hotPos: 0 })).note, /Any two positions are orthogonal: 0 is orthogonal to 1 \(similarity 0\)/);
  for (let p = 0; p < 64; p++) {
    assert.doesNotMatch((await viewAt('one-hot', { seqLen: 64, hotPos: p })).note, new RegExp(`\\b${p} is as unlike ${p}\\b`));
  }
});

test('a pair past the last one is refused when typed and said in the note (shift, rope-rotation)', async () => {
  assert.equal(pairRule(63, 64, 'd_model 128'), '');
  assert.equal(pairRule(64, 64, 'd_model 128'), 'pair i: at most 63, the last of the 64 pairs of d_model 128');
  assert.equal(pairRule(1, 1, 'd_model 2'), 'pair i: at most 0, the last of the one pair of d_model 2');
  assert.equal(pairRule(5, 0, 'the rotated width 1'), '');  // no pair at all: the view says ropeRule's words
  assert.match((await viewAt('shift', { shiftPair: 2047 })).note, /^Pair 2047 is past the last pair of d_model 128: pair 63 is drawn\. /);
  assert.doesNotMatch((await viewAt('shift', { shiftPair: 63 })).note, /past the last/);
  assert.match((await viewAt('rope-rotation', { rotPair: 2047, partial: 0.5 })).note,
    /^Pair 2047 is past the last pair of the rotated width 64: pair 31 is drawn\. Score/);
});

test('ntk\'s cos/sin cache is counted as the in-production view counts it, in KiB to GiB', async () => {
  assert.match((await viewAt('ntk', {})).html,
    /16,384 positions: 64 pairs' cos and sin, 8\.0 MiB in float32 \(HF's \[16,384, 128\] tables: 16\.0 MiB\)/);
  assert.match((await viewAt('ntk', { factor: 1024, lTrain: 1048576 })).html, /, 512\.00 GiB in float32/);
  assert.match((await viewAt('ntk', { factor: 1, lTrain: 2 })).html, /, 1\.0 KiB in float32/);
});

test('dim-traces says why each dimension is not drawn', async () => {
  const { note } = await viewAt('dim-traces', { dims: '0,1,500,abc,2,3,4,5,6,7,8' });
  assert.match(note, /Not drawn: dim 500 \(d_model is 128\)\. Not drawn: dim 8 \(at most 8 are drawn\)\. Not a dimension: “abc”\./);
  // An entry is read as dimsOf reads it: "1e1" is dim 10, drawn, not "no dimension".
  const tens = await viewAt('dim-traces', { dims: '1e1,2' });
  assert.deepEqual(tens.data.dims, [10, 2]);
  assert.doesNotMatch(tens.note, /Not a dimension/);
});

// From a second learner's review: sentences that were false at some setting.
test('attention: a scheme that cannot tell a sentence from its reverse says so, and why', async () => {
  const alibi = await viewAt('attention', { attnScheme: 'alibi', attnCausal: false });
  assert.equal(alibi.data.worst, 0);
  assert.match(alibi.note, /^With ALiBi bias and no causal mask: the re-ordered map equals the first .* cannot tell them apart\. The causal mask breaks the tie\.$/);
  assert.match((await viewAt('attention', { attnScheme: 'alibi', attnCausal: true })).note, /word order now changes what each word attends to/);
  // RoPE without the mask differs a little (0.006 at d 16): it does tell them apart.
  assert.match((await viewAt('attention', { attnScheme: 'rope', attnCausal: false })).note, /differ by up to 0\.006, so word order now/);
});

test('alibi states the slope rule for any head count and max bias', async () => {
  assert.match((await viewAt('alibi', { heads: 8 })).note, /0\.0039\. Head k: 2\^\(−8\(k\+1\)\/8\)\.$/);
  const twelve = await viewAt('alibi', { heads: 12 });
  assert.match(twelve.note, /head 8 0\.7071, head 0 0\.5000/);
  assert.match(twelve.note, /12 heads is not a power of 2: heads 0 … 7 take 2\^\(−8\(k\+1\)\/8\) \(8: the max bias\), as 8 heads would, and heads 8 … 11 the slopes halfway between 1 and head 0's, head 0's and head 1's, … \(in the exponent\), 2\^\(−8\(2\(k−8\)\+1\)\/16\)\./);
  // The rule against the package's slopes: head 8 … 11 at 2^(−(2(k−8)+1)/2), heads 0 … 7 at 2^(−(k+1)).
  const slopes = twelve.data.slopes;
  for (let k = 0; k < 12; k++) assert.equal(slopes[k], Math.fround(2 ** -(k < 8 ? k + 1 : (2 * (k - 8) + 1) / 2)), `head ${k}`);
  assert.match((await viewAt('alibi', { heads: 9, maxBias: 64 })).note, /heads 0 … 7 take 2\^\(−64\(k\+1\)\/8\) \(64: the max bias\), .* and head 8 the slope halfway between 1 and head 0's \(/);
});

test('one-hot says the maps show the first 64 positions before it counts them', async () => {
  const { note } = await viewAt('one-hot', { seqLen: 100 });
  assert.match(note, /^One-hot: 100 positions need 100 dimensions .* with the longest text\. The maps show the first 64: positions 0 … 63\. Any two/);
  assert.doesNotMatch((await viewAt('one-hot', { seqLen: 50 })).note, /The maps show the first/);
});

test('sinusoidal wavelengths follow the layout: the formula\'s, or tensor2tensor\'s for concat', async () => {
  const { wavelengths } = await import('../../web/views/shared/wavelengths.js');
  const { GUIDES } = await import('../../web/page/guide.js');
  for (const [sinLayout, omega] of [['interleaved', (i) => 10000 ** (-(2 * Math.floor(i / 2)) / 128)],
    ['concat', (i) => 10000 ** (-(i % 64) / 63)]]) {
    const st = { ...defaults(), sinLayout }, dims = [0, 1, 20, 60, 63, 64, 100, 127];
    wavelengths(pe, st, dims).forEach((w, k) => {
      const want = (2 * Math.PI) / omega(dims[k]);
      assert.ok(Math.abs(w / want - 1) < 1e-4, `${sinLayout} dim ${dims[k]}: ${w} against ${want}`);
    });
    const step = GUIDES.sinusoidal.find((s) => s.view === 'dim-traces');
    const caption = step.caption({ ...st, ...step.patch(st) }, pe);
    const last = Math.round((2 * Math.PI) / omega(60)).toLocaleString('en-US');
    assert.match(caption, new RegExp(`^dim 0 repeats every 6\\.3 positions \\(2π\\), dim 60 every ${last}: .*, ${sinLayout} layout\\)\\.$`));
  }
  // The highest dimension the step draws: 20 at d_model 32; at d_model 2 only dim 0, pair 0 alone.
  const clocks = GUIDES.sinusoidal.find((s) => s.view === 'dim-traces'), at = (dModel) => ({ ...defaults(), dModel, ...clocks.patch({}) });
  assert.match(clocks.caption(at(32), pe), /^dim 0 repeats every 6\.3 positions \(2π\), dim 20 every /);
  assert.match(clocks.caption(at(2), pe), /^dim 0 repeats every 6\.3 positions \(2π\): d_model 2 has no slower pair to compare/);
});

test('rope-cache names the model on the page only when it has RoPE, and calls a close race even', async () => {
  const settle = async (settings, extras) => {
    const view = (await import('../../web/views/rope-cache.js')).default;
    const st = { ...defaults(), ...settings };
    for (let k = 0; k < 2000; k++) {
      const data = view.compute({ pe, st, extras, lab, redraw() {}, memo: (_, f) => f() });
      if (data.done) return view.note(data);
    }
    throw new Error('the measurement did not finish');
  };
  // The model's own scheme, not the positions menu a view or a guided step set (here RoPE's and none).
  const gpt2 = await settle({ attnScheme: 'rope', dModel: 64 }, { modelLabel: 'GPT-2 (124M)', modelScheme: 'learned' });
  assert.match(gpt2, /^The cos\/sin table for these settings \(GPT-2 \(124M\), on the page, has no RoPE\): /);
  assert.match(gpt2, /: ((gathering|recomputing) is [0-9.]+× faster|neither is 25 % faster), rows equal bit for bit\.$/);
  assert.match(await settle({ attnScheme: 'none', dModel: 64 }, { modelLabel: 'Llama', modelScheme: 'rope' }), /^The cos\/sin table for Llama: /);
});

// From a learner's review of the folds.
test('irope says whose floor_scale and attn_scale the curve uses, and never names position 0 twice', async () => {
  assert.match((await viewAt('irope', {})).html, /No model chosen: the curve uses Llama-4-Scout's floor_scale \(8192\) and attn_scale \(0\.1\)\./);
  const own = await viewAt('irope', { iropeFloor: 1, iropeAttn: 10, iropeSpan: 1024 });
  assert.match(own.html, /No model chosen: the curve uses the floor_scale and attn_scale set here \(Llama-4-Scout's are 8192 and 0\.1\)\./);
  assert.match(own.note, /^Multiplier at position 0 \(where \(p \+ 1\) \/ floor_scale reaches 1\): 7\.9315; at 1024: /);
  assert.match((await viewAt('irope', {})).note, /^Multiplier at position 8190: 1\.0000; at 8191 \(where/);
});

test('ordinals in the sampling notes: 1st, 2nd, 3rd, 11th, 4101st', async () => {
  const { nth } = await import('../../web/views/shared/numbers.js');
  assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111, 4101].map(nth),
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '101st', '111th', '4101st']);
  const { samplingNote } = await import('../../web/views/shared/sampling.js');
  assert.match(samplingNote(Float64Array.from({ length: 3 }, (_, k) => k * 4101), 4194304), /^Sampled: every 4101st of 4194304 positions/);
});

test('mrope says how an interleaved split that does not fit comes out', async () => {
  const off = async (settings) => {
    const view = (await import('../../web/views/mrope.js')).default, memo = new Map();
    const data = view.compute({ pe, st: { ...defaults(), ...settings }, extras: {}, lab, offload: () => { throw new Error('not here'); },
      memo: (k, f) => { if (!memo.has(k)) memo.set(k, f()); return memo.get(k); } });
    return view.note(data);
  };
  assert.match(await off({ mropeInterleaved: true }), /mrope_section 16, 24, 24, interleaved \(dealt t, h, w in turn, HF's way, it gives 22 : 21 : 21 pairs;/);
  assert.match(await off({ mropeInterleaved: true, mropeSection: '24,20,20' }), /mrope_section 24, 20, 20, interleaved; /);
});

test('score-vs-distance says which T5 it draws: the encoder\'s buckets or the decoder\'s', async () => {
  const { PAGE_SCHEMES } = await import('../../web/views/shared/schemes.js');
  const t5 = PAGE_SCHEMES.find((s) => s.id === 't5'), xs = Float64Array.from({ length: 64 }, (_, k) => k);
  assert.match(t5.distance({ pe, st: { ...defaults(), t5Bidir: true } }, xs).series[0].label, /^encoder \(bidirectional\): 32 buckets/);
  assert.match(t5.distance({ pe, st: { ...defaults(), t5Bidir: false } }, xs).series[0].label, /^decoder: 32 buckets/);
});

test('precision draws its reference line where the text says errors start to matter', async () => {
  const view = (await import('../../web/views/precision.js')).default;
  const { data } = await viewAt('precision', {});
  assert.deepEqual(view.plot(data, null).spec.hlines.map((h) => h.y), [1e-3]);
});

test('spectrum\'s llama3 band multiplies the long wavelengths by the factor, and says so', async () => {
  const { data: spectrum } = await viewAt('spectrum', { scaling: 'llama3', factor: 8, lTrain: 8192 });
  assert.ok(spectrum.hlines.some((h) => /longer than 8192 → × factor/.test(h.label)), JSON.stringify(spectrum.hlines.map((h) => h.label)));
  // The stretch it names: past L_train / low_freq_factor a pair's wavelength is the factor times longer.
  const last = spectrum.series[1].y.at(-1) / spectrum.series[0].y.at(-1);
  assert.ok(Math.abs(last - 8) < 1e-6, `${last}`);
});
