// How each scheme makes a score depend on distance, one panel per scheme (its entry's distance in
// schemes.js) (chapter "comparison").
import { linesCsv } from '../plot/lines.js';
import { panelsHeight } from '../plot/panels.js';
import { pageScheme } from './shared/schemes.js';
import { SCHEMES, schemesOf } from '../settings/state.js';
import { moveLinePanelGrid } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { columnsFor, samplePositions } from './shared/sampling.js';

const PANEL = 230, MIN_WIDTH = 460;

export default {
  id: 'score-vs-distance',
  controls: [['schemes', { kind: 'checks', label: 'schemes shown', values: SCHEMES }]],
  height: (width, d) => panelsHeight(Math.max(1, d?.panels.length ?? 4), width, PANEL, MIN_WIDTH),
  compute(ctx) {
    const { st } = ctx;
    const last = Math.max(1, Math.min(st.seqLen - 1, 8191));
    // The RoPE panel rotates a d-wide vector per distance: the distances drawn shrink as d grows.
    const xs = samplePositions(last, Math.min(1024, columnsFor(16 * st.dModel)));
    // In SCHEMES' order, whatever order the setting lists them in.
    const schemes = schemesOf(st);
    const panels = SCHEMES.filter((s) => schemes.includes(s)).map((s) => pageScheme(s).distance(ctx, xs));
    if (!panels.length) throw new Error('No scheme chosen: tick at least one scheme above.');
    return { xs, panels, total: last + 1 };
  },
  plot: (d, cursor) => ({ kind: 'panels', spec: { minWidth: MIN_WIDTH, cursor, panels: d.panels.map((p) => (p.message
    ? { title: p.title, kind: 'message', spec: { text: p.message } }
    : { title: p.title, kind: 'lines', spec: { series: p.series, xLabel: 'distance Δ (positions)', yLabel: p.yLabel } })) } }),
  note: (d) => (d.xs.length < d.total ? `Sampled: every ${d.xs[1] - d.xs[0]}th distance up to ${d.total - 1}.` : ''),
  // Up and Down go to the panel drawn above or below; the other keys move along Δ, and on to the next panel.
  move: (d, c, key, layout) => moveLinePanelGrid({ panel: Math.min(c.panel, d.panels.length - 1), i: c.i },
    d.panels.map(() => d.xs.length), key, layout),
  readout: (d, c) => {
    const p = d.panels[c.panel];
    if (!p.series) return p.message;
    const picks = p.series.length > 4 ? [0, p.series.length >> 1, p.series.length - 1] : p.series.map((_, k) => k);
    const values = picks.map((k) => `${p.series[k].label || `head ${p.series[k].head}`} = ${fmt(p.series[k].y[c.i], 5)}`);
    return `${p.title}, Δ = ${d.xs[c.i]}: ${values.join('; ')}`;
  },
  csv: (d) => linesCsv('delta', d.xs, d.panels.flatMap((p) => (p.series ?? [])
    .map((s, k) => ({ ...s, label: `${p.title.split(':')[0]} ${s.label || `head ${s.head ?? k}`}` })))),
  caption: (st) => `scores schemes=${st.schemes} d=${st.dModel} base=${st.base} theta=${st.theta} heads=${st.heads} `
    + `max_bias=${st.maxBias} t5=${st.t5Buckets}/${st.t5MaxDist}`,
  cursor0: () => ({ panel: 0, i: 0 }),
};
