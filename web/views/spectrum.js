// Wavelength per rotary pair before and after scaling (chapter "long-context").
import { SERIES } from '../plot/colormap.js';
import { linesCsv } from '../plot/lines.js';
import { TWO_PI, fmt } from './shared/numbers.js';
import { fileRope, ropeParams, ropeRule } from '../settings/rope-settings.js';

// Lines at one wavelength drawn once, their labels joined (at low_freq_factor 1, Llama 3.1's, llama3's
// first bound is L_train itself), in the colour of the last: one line hid the other's.
function oneLineEach(hlines) {
  const at = new Map();
  for (const h of hlines) {
    const same = at.get(h.y);
    at.set(h.y, same ? { ...h, label: `${same.label}; ${h.label}` } : h);
  }
  return [...at.values()];
}

export default {
  id: 'spectrum',
  compute({ pe, st, extras }) {
    const rule = ropeRule(st);
    if (rule) throw new Error(rule);
    const base = pe.ropeFrequencies(ropeParams(st, extras), { dtype: 'float64' });
    const scaled = pe.ropeFrequencies(ropeParams(st, extras, st.scaling, true), { seqLen: st.lTarget, dtype: 'float64' });
    const factors = Boolean(fileRope(st, extras)?.freqFactors);
    const xs = Float64Array.from(base.invFreq, (_, i) => i);
    const before = Float64Array.from(base.invFreq, (f) => TWO_PI / f);
    const after = Float64Array.from(scaled.invFreq, (f) => TWO_PI / f);
    const ratio = Float64Array.from(after, (w, i) => w / before[i]);
    const withFactors = `${st.scaling === 'none' ? '' : `${st.scaling} + `}the file's freq_factors`;
    const series = [
      { label: 'wavelength, unscaled', x: xs, y: before, color: SERIES[0] },
      { label: `wavelength, ${factors ? withFactors : st.scaling}`, x: xs, y: after, color: SERIES[1], dash: [6, 3] },
      { label: 'stretch after/before (right axis)', x: xs, y: ratio, color: SERIES[2], axis: 2 },
    ];
    // Labels on the left, where the curves are the fastest pairs' short wavelengths, far below these lines.
    const hlines = [{ y: st.lTrain, label: `L_train = ${st.lTrain}`, side: 'left' },
      { y: st.lTarget, label: `L_target = ${st.lTarget}`, color: SERIES[3], side: 'left' }];
    if (st.scaling === 'llama3') {
      const low = st.lTrain / st.lowFreq, high = st.lTrain / st.highFreq;
      hlines.push({ y: low, label: `llama3: longer than ${fmt(low, 0)} → × factor`, color: SERIES[4], side: 'left' });
      hlines.push({ y: high, label: `llama3: shorter than ${fmt(high, 0)} → kept`, color: SERIES[4], side: 'left' });
    }
    return { xs, series, hlines: oneLineEach(hlines), attentionFactor: scaled.attentionFactor, scaling: st.scaling, factors };
  },
  plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, hlines: d.hlines, xLabel: 'rotary pair i (0 = fastest)',
    yLabel: 'wavelength (positions, log)', y2Label: 'stretch', yLog: true, cursor } }),
  note: (d) => (d.scaling === 'none' && !d.factors
    ? 'Scaling is "none": the two wavelength curves coincide. Choose a scaling above to see what it stretches.'
    : `Attention factor a = ${fmt(d.attentionFactor, 4)} (multiplies cos and sin, so a score grows by a²).`),
  readout: (d, c) => `pair ${c.i}: wavelength ${fmt(d.series[0].y[c.i], 3)} → ${fmt(d.series[1].y[c.i], 3)} positions `
    + `(×${fmt(d.series[2].y[c.i], 4)})`,
  csv: (d) => linesCsv('pair', d.xs, d.series),
  caption: (st) => `rope head_dim=${st.dModel} theta=${st.theta} scaling=${st.scaling} factor=${st.factor} L_train=${st.lTrain} `
    + `L_target=${st.lTarget} partial=${st.partial}`,
  cursor0: () => ({ i: 0 }),
};
