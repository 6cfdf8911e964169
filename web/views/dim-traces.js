// Chosen dimensions of the sinusoidal table against position (chapter "sinusoidal").
import { SERIES } from '../plot/colormap.js';
import { linesCsv } from '../plot/lines.js';
import { MAX_DIMS, dimsOf } from '../settings/state.js';
import { fmt } from './shared/numbers.js';
import { columnsFor, samplePositions, samplingNote, sinusoidalRows } from './shared/sampling.js';
import { wavelengthText, wavelengths } from './shared/wavelengths.js';

function dimsRule(v, st) {
  const list = v.split(',');
  if (!list.every((x) => /^\s*\d+\s*$/.test(x))) return 'dimensions: whole numbers separated by commas, e.g. 0,1,20,40';
  if (list.length > MAX_DIMS) return `dimensions: at most ${MAX_DIMS} (got ${list.length})`;
  const past = list.map(Number).filter((d) => st && d >= st.dModel);
  return past.length ? `dimensions: each below d_model ${st.dModel} (got ${past.join(', ')})` : '';
}

export default {
  id: 'dim-traces',
  controls: [['dims', { kind: 'text', label: 'dimensions', validate: dimsRule }]],
  compute(ctx) {
    const { pe, st } = ctx;
    // A whole table per position for a few dimensions drawn: fewer positions as d_model grows.
    const xs = samplePositions(st.seqLen - 1, columnsFor(4 * st.dModel));
    const table = sinusoidalRows(ctx, xs);
    const dims = dimsOf(st);
    if (!dims.length) {
      throw new Error(`No dimension below d_model = ${st.dModel} chosen: type dimensions from 0 to ${st.dModel - 1}.`);
    }
    // Dimensions not drawn are said, each with its reason, not dropped in silence: a link's entry
    // that is no dimension, one for a wider d_model than the one now set, one past the first MAX_DIMS.
    const entries = st.dims.split(',').map((x) => x.trim()).filter((x) => x !== '');
    const whole = (x) => Number.isInteger(Number(x)) && Number(x) >= 0;  // as dimsOf reads an entry
    const dropped = {
      words: entries.filter((x) => !whole(x)),
      past: entries.filter((x) => whole(x) && Number(x) >= st.dModel).map(Number),
      extra: entries.filter((x) => whole(x) && Number(x) < st.dModel && !dims.includes(Number(x))).map(Number),
    };
    const series = dims.map((dim, k) => ({ label: `dim ${dim}`, x: xs, color: SERIES[k % SERIES.length],
      y: Float64Array.from(xs, (_, i) => table[i * st.dModel + dim]) }));
    return { xs, series, total: st.seqLen, dims, wavelengths: wavelengths(pe, st, dims), dropped, dModel: st.dModel };
  },
  plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, xLabel: 'position pos', yLabel: 'PE[pos][dim]',
    yDomain: [-1.05, 1.05], cursor } }),
  note: (d) => [`Wavelengths: ${d.dims.map((dim, k) => `dim ${dim} ${wavelengthText(d.wavelengths[k])}`).join(', ')} positions.`,
    d.dropped.past.length ? `Not drawn: dim ${d.dropped.past.join(', ')} (d_model is ${d.dModel}).` : '',
    d.dropped.extra.length ? `Not drawn: dim ${d.dropped.extra.join(', ')} (at most ${MAX_DIMS} are drawn).` : '',
    d.dropped.words.length ? `Not a dimension: ${d.dropped.words.map((x) => `“${x}”`).join(', ')}.` : '',
    samplingNote(d.xs, d.total)].filter(Boolean).join(' '),
  readout: (d, c) => `pos ${d.xs[c.i]}: ${d.series.map((s) => `${s.label} = ${fmt(s.y[c.i])}`).join(', ')}`,
  csv: (d) => linesCsv('pos', d.xs, d.series),
  caption: (st) => `sinusoidal dims=${st.dims} base=${st.base} d_model=${st.dModel}`,
  cursor0: () => ({ i: 0 }),
};
