// llama.cpp's context shift: cached keys re-rotated by −Δ (pe.shiftKeys) equal keys recomputed at
// their new positions; left alone, they give the next query wrong scores (chapter "long-context").
import { SERIES } from '../colormap.js';
import { linesCsv } from '../plot/lines.js';
import { moveIndex } from '../cursor.js';
import { fmt } from '../numbers.js';
import { ropeParams, ropeRule } from '../rope-params.js';
import { seededVectors } from '../vectors.js';

export default {
  id: 'context-shift',
  controls: [
    ['shiftDelta', { label: 'tokens dropped Δ', slider: { min: 1, max: 65536, log: true } }],
    ['shiftKeep', { label: 'tokens kept N', slider: { min: 2, max: 2048, log: true } }],
  ],
  compute({ pe, st, extras }) {
    const rule = ropeRule(st);
    if (rule) throw new Error(rule);
    const d = st.dModel, n = st.shiftKeep, delta = st.shiftDelta;
    const params = ropeParams(st, extras, st.scaling, true);
    const common = { nHeads: 1, headDim: d, params, layout: st.layout, precision: st.precision };
    const q = seededVectors(pe, 1, d, 51), keys = seededVectors(pe, n, d, 52);  // a different word at every position
    const at = (x, positions) => pe.applyRope(x, { ...common, seqLen: positions.length, positions });
    const fresh = at(keys, Array.from({ length: n }, (_, j) => j));
    const cached = at(keys, Array.from({ length: n }, (_, j) => delta + j));
    const shifted = cached.slice();
    pe.shiftKeys(shifted, { ...common, seqLen: n, delta: -delta });
    const query = at(q, [n]);
    const scores = (k) => Float64Array.from({ length: n }, (_, j) => {
      let s = 0;
      for (let e = 0; e < d; e++) s += query[e] * k[j * d + e];
      return s / Math.sqrt(d);
    });
    let worst = 0;
    for (let e = 0; e < fresh.length; e++) worst = Math.max(worst, Math.abs(shifted[e] - fresh[e]));
    const xs = Float64Array.from({ length: n }, (_, j) => j);
    const series = [
      { label: 'recomputed at the new positions', x: xs, y: scores(fresh), color: SERIES[0], width: 3 },
      { label: 'cached, shifted by −Δ (shiftKeys)', x: xs, y: scores(shifted), color: SERIES[2], dash: [5, 4], width: 1.6 },
      { label: 'cached, not shifted (stale)', x: xs, y: scores(cached), color: SERIES[1], dash: [2, 3], width: 1.2 },
    ];
    let stale = 0;
    for (let j = 0; j < n; j++) stale = Math.max(stale, Math.abs(series[2].y[j] - series[0].y[j]));
    return { xs, series, worst, stale, n, delta, precision: st.precision };
  },
  plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, xLabel: 'key position after the shift',
    yLabel: 'score of the next query, q·k / √d', cursor } }),
  move: (d, c, key) => moveIndex(c, d.xs.length, key),
  note: (d) => `Largest difference between shifted and recomputed keys: ${d.worst.toExponential(1)} (rounding: precision `
    + `${d.precision} forms the angles of positions up to ${d.delta + d.n - 1} `
    + `${d.precision === 'fast' ? 'in float32, see the precision view' : 'in float64'}); `
    + `the stale cache is off by up to ${fmt(d.stale, 3)} in a score.`,
  readout: (d, c) => `key ${d.xs[c.i]} (cached at ${d.delta + d.xs[c.i]}): recomputed ${fmt(d.series[0].y[c.i], 5)}, `
    + `shifted ${fmt(d.series[1].y[c.i], 5)}, stale ${fmt(d.series[2].y[c.i], 5)}`,
  csv: (d) => linesCsv('key_position', d.xs, d.series),
  caption: (st) => `context shift delta=${st.shiftDelta} kept=${st.shiftKeep} head_dim=${st.dModel} theta=${st.theta} `
    + `scaling=${st.scaling} precision=${st.precision}`,
  cursor0: (d) => ({ i: d.xs.length - 1 }),
};
