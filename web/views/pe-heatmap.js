// The sinusoidal table PE[pos][dim] as two heatmaps (chapter "sinusoidal"): the formula's
// interleaved layout (sin and cos alternate row by row: stripes) beside the concat layout most
// introductions draw (all sines, then all cosines: bands).
import { DIVERGING } from '../plot/colormap.js';
import { movePanels } from '../plot/cursor.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { panelsHeight } from '../plot/panels.js';
import { TWO_PI, fmt } from './shared/numbers.js';
import { columnsFor, samplePositions, samplingNote, sinusoidalRows } from './shared/sampling.js';

const PANEL = 250, MIN_WIDTH = 420;
const LAYOUTS = [
  { layout: 'interleaved', title: 'the formula\'s layout: sin, cos, sin, cos, … (stripes)' },
  { layout: 'concat', title: 'introductions\' layout: all sines, then all cosines (bands)' },
];

export default {
  id: 'pe-heatmap',
  height: (width) => panelsHeight(2, width, PANEL, MIN_WIDTH),
  compute(ctx) {
    const { st } = ctx;
    // Two tables share one table's budget of cells (sampling.js), so the pair draws as fast as one did.
    const xs = samplePositions(st.seqLen - 1, columnsFor(2 * st.dModel));
    const panels = LAYOUTS.map((l) => ({ ...l, values: sinusoidalRows({ ...ctx, st: { ...st, sinLayout: l.layout } }, xs) }));
    return { xs, nx: xs.length, ny: st.dModel, panels, total: st.seqLen };
  },
  plot: (d, cursor) => ({ kind: 'panels', spec: { minWidth: MIN_WIDTH, each: PANEL, cursor, panels: d.panels.map((p, k) => ({
    title: p.title, kind: 'heatmap', spec: { values: p.values, nx: d.nx, ny: d.ny, xDomain: [d.xs[0], d.xs[d.nx - 1]],
      lo: -1, hi: 1, lut: DIVERGING, xLabel: 'position pos', yLabel: k ? 'dimension (sines, then cosines)' : 'dimension (0 = fastest)',
      legendLabel: 'PE value' } })) } }),
  move: (d, c, key) => movePanels(c, d.panels.map(() => ({ nx: d.nx, ny: d.ny })), key),
  note: (d) => samplingNote(d.xs, d.total),
  readout(d, c, st) {
    const v = d.panels[c.panel].values[c.x * d.ny + c.y];
    if (d.panels[c.panel].layout === 'interleaved') {
      const i = Math.floor(c.y / 2);
      const wavelength = TWO_PI * st.base ** ((2 * i) / st.dModel);
      return `interleaved: pos ${d.xs[c.x]}, dim ${c.y} = ${c.y % 2 ? 'cos' : 'sin'}(pos / ${st.base}^(${2 * i}/${st.dModel})), `
        + `wavelength ${fmt(wavelength, 4)} positions: ${fmt(v)}`;
    }
    return `concat: pos ${d.xs[c.x]}, dim ${c.y} (${c.y < Math.ceil(d.ny / 2) ? 'sin' : 'cos'} half): ${fmt(v)}`;
  },
  csv: (d) => d.panels.map((p) => heatmapCsv({ ...d, values: p.values }, 'pos', 'dim', `pe_${p.layout}`)).join(''),
  caption: (st) => `sinusoidal seq_len=${st.seqLen} d_model=${st.dModel} base=${st.base} layouts=interleaved,concat`,
  cursor0: (d) => ({ panel: 0, x: Math.min(1, d.nx - 1), y: 0 }),
};
