// Angle error of float32 RoPE against position (chapter "long-context").
import { SERIES } from '../plot/colormap.js';
import { linesCsv } from '../plot/lines.js';
import { TWO_PI, fmt } from './shared/numbers.js';
import { ropeParams, ropeRule } from '../settings/rope-settings.js';

export default {
  id: 'precision',
  compute({ pe, st, extras }) {
    const rule = ropeRule(st);
    if (rule) throw new Error(rule);
    const exact = pe.ropeFrequencies(ropeParams(st, extras, st.scaling, true), { seqLen: st.lTarget, dtype: 'float64' }).invFreq;
    const xs = Float64Array.from({ length: 41 }, (_, i) => Math.round(2 ** (i / 2)));
    const errors = {};
    for (const precision of ['fast', 'accurate']) {
      const { cos, sin } = pe.ropeCache({ invFreq: exact, positions: xs, precision });
      const half = exact.length;
      errors[precision] = Float64Array.from(xs, (p, t) => {
        let worst = 0;
        for (let k = 0; k < half; k++) {
          let e = Math.atan2(sin[t * half + k], cos[t * half + k]) - ((p * exact[k]) % TWO_PI);
          e = Math.abs(e - TWO_PI * Math.round(e / TWO_PI));
          worst = Math.max(worst, e);
        }
        return Math.max(worst, 1e-9);
      });
    }
    return { xs, series: [
      { label: "'fast' (float32 angle)", x: xs, y: errors.fast, color: SERIES[1] },
      { label: "'accurate' (float64, reduced)", x: xs, y: errors.accurate, color: SERIES[0] },
    ] };
  },
  plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, xLabel: 'position (log)', yLabel: 'max angle error (rad, log)',
    xLog: true, yLog: true, hlines: [{ y: 1e-3, label: '1e-3 rad: below, a score barely moves' }], cursor } }),
  note: () => 'Errors below 1e-9 rad are drawn at 1e-9.',
  readout: (d, c) => `pos ${d.xs[c.i]}: fast ${fmt(d.series[0].y[c.i], 3)} rad, accurate ${fmt(d.series[1].y[c.i], 3)} rad`,
  csv: (d) => linesCsv('pos', d.xs, d.series),
  caption: (st) => `precision head_dim=${st.dModel} theta=${st.theta} scaling=${st.scaling}`,
  cursor0: (d) => ({ i: d.xs.length - 1 }),
};
