// How each scheme makes a score depend on distance, one panel per scheme (chapter "comparison").
import { SEQUENTIAL, SERIES } from '../colormap.js';
import { lutColor } from '../plot/heatmap.js';
import { linesCsv } from '../plot/lines.js';
import { panelsHeight } from '../plot/panels.js';
import { SCHEMES, schemesOf } from '../state.js';
import { moveIndex } from '../cursor.js';
import { headsBySlope } from '../heads.js';
import { fmt } from '../numbers.js';
import { fileRope, ropeParams } from '../rope-params.js';
import { columnsFor, samplePositions } from '../sampling.js';

const PANEL = 230, MIN_WIDTH = 460;

// q·k / d for all-ones q and k, q at each distance Δ and k at 0, both rotated (so a scaling's
// attention factor a enters twice: a²).
function ropeCurve(pe, st, params, xs) {
  const d = st.dModel;
  const opts = { nHeads: 1, headDim: d, params, layout: st.layout, precision: st.precision };
  const q = pe.applyRope(new Float32Array(xs.length * d).fill(1), { ...opts, seqLen: xs.length, positions: xs });
  const k = pe.applyRope(new Float32Array(d).fill(1), { ...opts, seqLen: 1, positions: [0] });
  return Float64Array.from(xs, (_, i) => { let s = 0; for (let j = 0; j < d; j++) s += q[i * d + j] * k[j]; return s / d; });
}

// One panel per scheme: { title, yLabel, series } or { title, message }.
const PANELS = {
  sinusoidal({ pe, st }, xs) {
    const rows = pe.sinusoidal(xs.length, st.dModel, { base: st.base, layout: st.sinLayout, positions: xs });
    const norm = Math.ceil(st.dModel / 2);
    const y = Float64Array.from(xs, (_, i) => {
      let s = 0;
      for (let k = 0; k < st.dModel; k++) s += rows[k] * rows[i * st.dModel + k];
      return s / norm;
    });
    return { title: 'Sinusoidal: PE(0)·PE(Δ)', yLabel: `score / ${norm}`,
      series: [{ label: `base ${st.base}`, x: xs, y, color: SERIES[0] }] };
  },
  rope({ pe, st, extras }, xs) {
    if (st.dModel % 2) return { title: 'RoPE', message: `RoPE needs an even head_dim (d_model ${st.dModel} is odd).` };
    const plain = ropeCurve(pe, st, ropeParams(st, extras), xs);
    const series = [{ label: `θ ${st.theta}, no scaling`, x: xs, y: plain, color: SERIES[1] }];
    const factors = Boolean(fileRope(st, extras)?.freqFactors);
    if ((st.scaling !== 'none' || factors) && (st.scaling !== 'longrope' || extras.longFactors)) {
      const y = ropeCurve(pe, st, ropeParams(st, extras, st.scaling, true), xs);
      series.push({ label: `${factors ? 'the file\'s frequencies' : `${st.scaling} ×${st.factor}`} (a² included)`, x: xs, y,
        color: SERIES[3], dash: [6, 3] });
    }
    return { title: 'RoPE: q·k / d, q = k = all ones', yLabel: 'score / d', series };
  },
  alibi({ pe, st }, xs) {
    const n = xs[xs.length - 1] + 1;
    const bias = pe.alibiBias(st.heads, 1, n, { causal: true, maxBias: st.maxBias });
    // One colour per head by its slope's rank, from viridis 0.35 (dark enough on white, light
    // enough on the dark theme: 0.25 was a navy hard to see there) to 0.92.
    const series = headsBySlope(pe.alibiSlopes(st.heads, { maxBias: st.maxBias })).map((h, rank) => ({
      label: rank === 0 ? `head ${h} (steepest)` : rank === st.heads - 1 ? `head ${h} (shallowest)` : '', head: h,
      x: xs, y: Float64Array.from(xs, (dx) => bias[h * n + (n - 1 - dx)]),
      color: lutColor(SEQUENTIAL, 0.35 + (st.heads > 1 ? (0.57 * rank) / (st.heads - 1) : 0)) }));
    return { title: `ALiBi: bias, one colour per head (${st.heads})`, yLabel: 'bias', series };
  },
  t5({ pe, st }, xs) {
    const buckets = pe.t5Bucket(Float64Array.from(xs, (dx) => -dx),
      { bidirectional: st.t5Bidir, numBuckets: st.t5Buckets, maxDistance: st.t5MaxDist });
    return { title: 'T5: bucket of the key Δ positions back', yLabel: 'bucket', series: [
      { label: `${st.t5Buckets} buckets, max distance ${st.t5MaxDist}`, x: xs, y: Float64Array.from(buckets), color: SERIES[5],
        step: true }] };
  },
};

export default {
  id: 'score-vs-distance',
  controls: [['schemes', { kind: 'checks', label: 'schemes shown', values: SCHEMES }]],
  height: (width, d) => panelsHeight(Math.max(1, d?.panels.length ?? 4), width, PANEL, MIN_WIDTH),
  compute(ctx) {
    const { st } = ctx;
    const last = Math.max(1, Math.min(st.seqLen - 1, 8191));
    const xs = samplePositions(last, Math.min(1024, columnsFor(4 * st.dModel)));
    // In SCHEMES' order, whatever order the setting lists them in.
    const schemes = schemesOf(st);
    const panels = SCHEMES.filter((s) => schemes.includes(s)).map((s) => PANELS[s](ctx, xs));
    if (!panels.length) throw new Error('No scheme chosen: tick at least one scheme above.');
    return { xs, panels, total: last + 1 };
  },
  plot: (d, cursor) => ({ kind: 'panels', spec: { minWidth: MIN_WIDTH, cursor, panels: d.panels.map((p) => (p.message
    ? { title: p.title, kind: 'message', spec: { text: p.message } }
    : { title: p.title, kind: 'lines', spec: { series: p.series, xLabel: 'distance Δ (positions)', yLabel: p.yLabel } })) } }),
  note: (d) => (d.xs.length < d.total ? `Sampled: every ${d.xs[1] - d.xs[0]}th distance up to ${d.total - 1}.` : ''),
  // Up and Down go to the panel above or below; the other keys move along Δ.
  move: (d, c, key) => {
    const step = { ArrowUp: -1, ArrowDown: 1 }[key];
    if (step) return { panel: Math.max(0, Math.min(d.panels.length - 1, c.panel + step)), i: c.i };
    return { ...moveIndex(c, d.xs.length, key), panel: Math.min(c.panel, d.panels.length - 1) };
  },
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
