// Chosen dimensions of the sinusoidal table against position (chapter "sinusoidal").
import { SERIES } from '../colormap.js';
import { linesCsv } from '../plot/lines.js';
import { dimsOf } from '../state.js';
import { columnsFor, fmt, samplePositions, samplingNote, sinusoidalRows } from './common.js';

export default {
  id: 'dim-traces',
  title: 'A few dimensions against position',
  explain: 'One line per chosen dimension: dimension 0 oscillates every 6 positions, dimension 40 needs hundreds, the last ones tens of thousands. Type dimensions (comma-separated) to compare.',
  controls: [['dims', { kind: 'text', label: 'dimensions', validate: (v) => (v.split(',').every((x) => /^\s*\d+\s*$/.test(x)) ? '' : 'dimensions: whole numbers separated by commas, e.g. 0,1,20,40') }]],
  compute(ctx) {
    const { st } = ctx;
    const xs = samplePositions(st.seqLen - 1, columnsFor(st.dModel));
    const table = sinusoidalRows(ctx, xs);
    const dims = dimsOf(st);
    if (!dims.length) throw new Error(`No dimension below d_model = ${st.dModel} chosen: type dimensions from 0 to ${st.dModel - 1}.`);
    const series = dims.map((dim, k) => ({ label: `dim ${dim}`, x: xs, y: Float64Array.from(xs, (_, i) => table[i * st.dModel + dim]), color: SERIES[k % SERIES.length] }));
    return { xs, series, total: st.seqLen };
  },
  plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, xLabel: 'position pos', yLabel: 'PE[pos][dim]', yDomain: [-1.05, 1.05], cursor } }),
  note: (d) => samplingNote(d.xs, d.total),
  readout: (d, c) => `pos ${d.xs[c.i]}: ${d.series.map((s) => `${s.label} = ${fmt(s.y[c.i])}`).join(', ')}`,
  csv: (d) => linesCsv('pos', d.xs, d.series),
  caption: (st) => `sinusoidal dims=${st.dims} base=${st.base} d_model=${st.dModel}`,
  cursor0: () => ({ i: 0 }),
};
