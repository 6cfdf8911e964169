// cos table of one RoPE scaling minus another (chapter "long-context").
import { DIVERGING } from '../plot/colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { fmt, nth } from './shared/numbers.js';
import { ropeParams, ropeRule } from '../settings/rope-settings.js';
import { samplePositions, samplingNote } from './shared/sampling.js';
import { SCALINGS } from '../settings/state.js';

export default {
  id: 'compare',
  controls: [['compare', { kind: 'select', label: 'compare with (B)', values: SCALINGS }]],
  compute({ pe, st, extras }) {
    const rule = ropeRule(st, st.scaling, st.compare);
    if (rule) throw new Error(rule);
    const last = Math.max(st.seqLen, st.lTarget) - 1;
    const xs = samplePositions(last, 1024);
    // Angles only (attention factor 1); at most 512 pairs, evenly spaced, are drawn.
    const fa = pe.ropeFrequencies(ropeParams(st, extras, st.scaling, true), { seqLen: last + 1, dtype: 'float64' }).invFreq;
    const fb = pe.ropeFrequencies(ropeParams(st, extras, st.compare), { seqLen: last + 1, dtype: 'float64' }).invFreq;
    const stride = Math.ceil(fa.length / 512);
    const pairs = Array.from({ length: Math.ceil(fa.length / stride) }, (_, k) => k * stride);
    const a = pe.ropeCache({ invFreq: pairs.map((i) => fa[i]), positions: xs, precision: st.precision });
    const b = pe.ropeCache({ invFreq: pairs.map((i) => fb[i]), positions: xs, precision: st.precision });
    const half = pairs.length;
    const values = new Float32Array(a.cos.length);
    let worst = 0;
    for (let i = 0; i < values.length; i++) {
      values[i] = a.cos[i] - b.cos[i];
      worst = Math.max(worst, Math.abs(values[i]));
    }
    return { xs, nx: xs.length, ny: half, values, total: last + 1, worst, same: st.scaling === st.compare, pairs,
      allPairs: fa.length };
  },
  plot: (d, cursor) => ({ kind: 'heatmap', spec: { values: d.values, nx: d.nx, ny: d.ny, xDomain: [d.xs[0], d.xs[d.nx - 1]],
    lo: -2, hi: 2, lut: DIVERGING, xLabel: 'position', yDomain: [d.pairs[0], d.pairs[d.ny - 1]], yLabel: 'rotary pair i',
    legendLabel: 'cos A − cos B', cursor } }),
  note: (d) => [
    d.same ? 'A and B are the same scaling: the difference is 0 everywhere.' : `Largest |difference| ${fmt(d.worst, 4)}.`,
    samplingNote(d.xs, d.total),
    d.pairs.length < d.allPairs ? `Every ${nth(d.pairs[1])} of ${d.allPairs} pairs drawn.` : '',
  ].filter(Boolean).join(' '),
  readout: (d, c, st) => `pos ${d.xs[c.x]}, pair ${d.pairs[c.y]}: cos(${st.scaling}) − cos(${st.compare}) = `
    + `${fmt(d.values[c.x * d.ny + c.y], 5)}`,
  csv: (d) => heatmapCsv(d, 'pos', 'pair', 'cos_a_minus_cos_b'),
  caption: (st) => `compare A=${st.scaling} B=${st.compare} theta=${st.theta} L_train=${st.lTrain} L_target=${st.lTarget}`,
  cursor0: (d) => ({ x: Math.min(1, d.nx - 1), y: 0 }),
};
