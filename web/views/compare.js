// cos table of one RoPE scaling minus another (chapter "long-context").
import { DIVERGING } from '../colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { fmt, ropeParams, ropeRule, samplePositions, samplingNote } from './common.js';
import { SCALINGS } from '../state.js';

export default {
  id: 'compare',
  title: 'Compare two scalings: cos A − cos B',
  explain: 'cos(pos·θ<sub>i</sub>) with the chapter\'s scaling (A) minus the same with the one chosen here (B), for positions up to L<sub>target</sub>. White where they agree: YaRN and llama3 leave the fast pairs (bottom) untouched; linear changes every pair.',
  controls: [['compare', { kind: 'select', label: 'compare with (B)', values: SCALINGS }]],
  compute({ pe, st, extras }) {
    const rule = ropeRule(st);
    if (rule) throw new Error(rule);
    const last = Math.max(st.seqLen, st.lTarget) - 1;
    const xs = samplePositions(last, 1024);
    // Angles only: attentionFactor 1 leaves out YaRN's and LongRoPE's magnitude factor.
    const a = pe.ropeCache({ params: ropeParams(st, extras, st.scaling), positions: xs, precision: st.precision, attentionFactor: 1 });
    const b = pe.ropeCache({ params: ropeParams(st, extras, st.compare), positions: xs, precision: st.precision, attentionFactor: 1 });
    const half = a.rotaryDim / 2;
    const values = Float32Array.from(a.cos, (v, i) => v - b.cos[i]);
    let worst = 0;
    for (const v of values) worst = Math.max(worst, Math.abs(v));
    return { xs, nx: xs.length, ny: half, values, total: last + 1, worst, same: st.scaling === st.compare };
  },
  plot: (d, cursor) => ({ kind: 'heatmap', spec: { values: d.values, nx: d.nx, ny: d.ny, xDomain: [d.xs[0], d.xs[d.nx - 1]], lo: -2, hi: 2, lut: DIVERGING, xLabel: 'position', yLabel: 'rotary pair i', legendLabel: 'cos A − cos B', cursor } }),
  note: (d) => [d.same ? 'A and B are the same scaling: the difference is 0 everywhere.' : `Largest |difference| ${fmt(d.worst, 4)}.`, samplingNote(d.xs, d.total)].filter(Boolean).join(' '),
  readout: (d, c, st) => `pos ${d.xs[c.x]}, pair ${c.y}: cos(${st.scaling}) − cos(${st.compare}) = ${fmt(d.values[c.x * d.ny + c.y], 5)}`,
  csv: (d) => heatmapCsv(d, 'pos', 'pair', 'cos_a_minus_cos_b'),
  caption: (st) => `compare A=${st.scaling} B=${st.compare} theta=${st.theta} L_train=${st.lTrain} L_target=${st.lTarget}`,
  cursor0: (d) => ({ x: Math.min(1, d.nx - 1), y: 0 }),
};
