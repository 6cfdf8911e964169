// One pair of q and k as vectors on a circle, turned by pos·θ_i; their dot product stays the same
// when both positions move by the same amount (chapter "rope").
import { SERIES } from '../plot/colormap.js';
import { linesCsv } from '../plot/lines.js';
import { panelsHeight } from '../plot/panels.js';
import { moveIndex } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { ropeParams, ropeRule, rotaryWidth } from '../settings/rope-settings.js';
import { pairRule, pastLastPair } from './shared/pairs.js';
import { seededVectors, tile } from './shared/vectors.js';

const MIN_WIDTH = 420, SHIFTS = 129;

// A number with a real minus sign, 4 decimals.
const signed = (v) => fmt(v, 4).replace(/^-/, '−');

function pairDims(i, rot, layout) {
  return layout === 'interleaved' ? [2 * i, 2 * i + 1] : [i, i + rot / 2];
}

export default {
  id: 'rope-rotation',
  controls: [
    ['rotM', { label: 'query position m', slider: { min: 0, max: 200 } }],
    ['rotN', { label: 'key position n', slider: { min: 0, max: 200 } }],
    ['rotPair', { label: 'pair i', slider: (st) => ({ min: 0, max: Math.max(0, Math.floor(rotaryWidth(st) / 2) - 1) }),
      validate: (v, st) => pairRule(v, Math.floor(rotaryWidth(st) / 2), `the rotated width ${rotaryWidth(st)}`) }],
    ['rotShift', { label: 'shift both by s', slider: { min: 0, max: 1000 } }],
    ['rotShift', { kind: 'play', label: 'play', suffix: '-play', play: { step: 1, max: 1000, interval: 120 } }],
  ],
  height: (width) => panelsHeight(2, width, 290, MIN_WIDTH),
  compute({ pe, st, extras }) {
    const rule = ropeRule(st, 'none');  // unscaled frequencies only
    if (rule) throw new Error(rule);
    const d = st.dModel, params = ropeParams(st, extras);
    const { rotaryDim } = pe.ropeFrequencies(params);
    const qk = seededVectors(pe, 2, d, 21);
    const q = qk.subarray(0, d), k = qk.subarray(d);
    const rope = (x, positions) => pe.applyRope(tile(x, positions.length),
      { seqLen: positions.length, nHeads: 1, headDim: d, params, positions, layout: st.layout });
    const s = st.rotShift;
    const shifts = Float64Array.from({ length: SHIFTS }, (_, i) => i);
    const qs = rope(q, Array.from(shifts, (t) => st.rotM + t)), ks = rope(k, Array.from(shifts, (t) => st.rotN + t));
    const kFixed = rope(k, [st.rotN]);
    const dotAt = (a, i, b, j) => { let v = 0; for (let t = 0; t < d; t++) v += a[i * d + t] * b[j * d + t]; return v; };
    const both = Float64Array.from(shifts, (_, t) => dotAt(qs, t, ks, t));
    const qOnly = Float64Array.from(shifts, (_, t) => dotAt(qs, t, kFixed, 0));
    const [qNow, kNow] = [rope(q, [st.rotM + s]), rope(k, [st.rotN + s])];
    const [q0, k0] = [rope(q, [st.rotM]), rope(k, [st.rotN])];
    const dot = (a, b) => { let v = 0; for (let j = 0; j < d; j++) v += a[j] * b[j]; return v; };
    const pair = Math.min(st.rotPair, rotaryDim / 2 - 1);
    const [a, b] = pairDims(pair, rotaryDim, st.layout);
    const theta = pe.ropeFrequencies(params, { dtype: 'float64' }).invFreq[pair];
    // The angle from q to k in this pair's plane, in (−π, π]: measured on the drawn vectors, and
    // φ₀ (before any rotation) that RoPE adds (n − m)·θ to.
    const wrap = (x) => {
      const y = x - 2 * Math.PI * Math.round(x / (2 * Math.PI));
      return y <= -Math.PI ? y + 2 * Math.PI : y;
    };
    const angleOf = (x, y) => wrap(Math.atan2(y[b], y[a]) - Math.atan2(x[b], x[a]));
    return { d, pair, asked: st.rotPair, rotaryDim, a, b, theta, qNow, kNow, q0, k0, score: dot(qNow, kNow), score0: dot(q0, k0), shifts, both, qOnly,
      m: st.rotM, n: st.rotN, s, angle: angleOf(qNow, kNow), phi0: angleOf(q, k) };
  },
  plot(data, cursor) {
    const { a, b } = data;
    const r = Math.max(...[data.qNow, data.kNow].map((v) => Math.hypot(v[a], v[b]))) * 1.05 || 1;
    // θ to 3 significant digits below 0.01 (4 decimals would print pair 63's 1.15e-4 as 0.0001).
    const theta = data.theta < 0.01 ? data.theta.toPrecision(3) : fmt(data.theta, 4);
    const circle = { title: `pair ${data.pair} (θ = ${theta} rad per position)`, kind: 'circle', spec: { radius: r,
      vectors: [
        { x: data.q0[a], y: data.q0[b], color: '#999999', dash: [4, 3], width: 1.5 },
        { x: data.k0[a], y: data.k0[b], color: '#999999', dash: [4, 3], width: 1.5 },
        { x: data.qNow[a], y: data.qNow[b], color: SERIES[0], label: `q at m+s = ${data.m + data.s}` },
        { x: data.kNow[a], y: data.kNow[b], color: SERIES[1], label: `k at n+s = ${data.n + data.s}` },
      ],
      caption: `angle q→k = φ₀ + (n − m)·θ = ${signed(data.phi0)} + (${signed((data.n - data.m) * data.theta)}) = `
        + `${signed(data.angle)} rad (mod 2π), whatever s; φ₀: q and k unrotated; dashed: s = 0` } };
    const lines = { title: `q·k over all ${data.d} dims as positions move`, kind: 'lines', spec: {
      series: [
        { label: 'both move by s: constant', x: data.shifts, y: data.both, color: SERIES[0], width: 2.5 },
        { label: 'only the query moves', x: data.shifts, y: data.qOnly, color: SERIES[1], dash: [5, 3] },
      ], xLabel: 'shift s', yLabel: 'score q·k' } };
    return { kind: 'panels', spec: { minWidth: MIN_WIDTH, cursor: cursor && { ...cursor, panel: 1 }, panels: [circle, lines] } };
  },
  move: (data, c, key) => ({ panel: 1, ...moveIndex(c, data.shifts.length, key) }),
  note: (data) => pastLastPair(data.asked, data.pair, `the rotated width ${data.rotaryDim}`) + (data.s === 0
    ? `Score q·k: ${fmt(data.score0, 5)}. Move "shift both by s" (or press play): it stays.`
    : `Score at s = 0: ${fmt(data.score0, 5)}; at s = ${data.s}: ${fmt(data.score, 5)} `
      + `(difference ${fmt(Math.abs(data.score - data.score0), 2)}, float32 rounding).`),
  readout: (data, c) => `s = ${data.shifts[c.i]}: both move ${fmt(data.both[c.i], 5)}, only the query ${fmt(data.qOnly[c.i], 5)}`,
  csv: (data) => linesCsv('shift', data.shifts, [{ label: 'both_move', y: data.both }, { label: 'query_only', y: data.qOnly }]),
  caption: (st) => `rope rotation m=${st.rotM} n=${st.rotN} s=${st.rotShift} pair=${st.rotPair} head_dim=${st.dModel} `
    + `theta=${st.theta}`,
  cursor0: () => ({ panel: 1, i: 0 }),
};
