// NTK-aware scaling as the lesson teaches it (chapter "long-context"): how plain RoPE, position
// interpolation (PI), NTK and YaRN slow each pair for the chapter's factor, L_train and θ (from the
// package's ropeFrequencies), NTK's base and the cos/sin cache it builds, and the same trained model
// read with each scaling: the lab's shipped RoPE run on markov, beside the lesson's claims.
import { SERIES } from '../plot/colormap.js';
import { moveLinePanelGrid } from '../plot/cursor.js';
import { rows } from '../lab/lab.js';
import { bytesText, fmt } from './shared/numbers.js';
import { linesCsv } from '../plot/lines.js';
import { panelsHeight } from '../plot/panels.js';
import { ntkBase, ropeParams, ropeRule } from '../settings/rope-settings.js';

const PANEL = 270, MIN_WIDTH = 400;
const n = (v) => v.toLocaleString('en-US');
// The scalings, in the lesson's order; dynamic NTK has no fixed stretch (it follows the text's
// length), so it is in the lab's panel only.
const SCALINGS = [
  { type: 'none', label: 'plain RoPE', color: SERIES[0] },
  { type: 'linear', label: 'PI (linear)', color: SERIES[1] },
  { type: 'ntk', label: 'NTK', color: SERIES[2] },
  { type: 'dynamic', label: 'dynamic NTK', color: SERIES[4], labOnly: true },
  { type: 'yarn', label: 'YaRN', color: SERIES[3] },
];
const MULTIPLES = [0.5, 1, 2, 4, 8];

// The shipped markov run's RoPE losses, mean over seeds, at each multiple of T_train per scaling
// (a scaling is evaluated past T_train only: below it the plain model's loss stands).
function labSeries(r) {
  const T = r.config.trainLength, xs = MULTIPLES.map((m) => m * T);
  const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
  const series = SCALINGS.map((s) => ({ label: s.label, x: xs, color: s.color, points: true,
    y: xs.map((L) => {
      const at = rows(r, 'rope', L, L > T ? s.type : 'none');
      return at.length ? mean(at.map((e) => e.loss)) : NaN;
    }) }));
  return { T, xs, series, floor: r.entropyRate, seeds: r.config.seeds ?? 1 };
}

export default {
  id: 'ntk',
  height: (width) => panelsHeight(2, width, PANEL, MIN_WIDTH),
  setup: (section, host) => host.lab.onChange((what) => { if (what === 'shipped') host.refresh('ntk'); }),
  compute({ pe, st, extras, lab }) {
    const rule = ropeRule(st, ...SCALINGS.filter((s) => !s.labOnly).map((s) => s.type));
    if (rule) throw new Error(rule);
    const freqs = Object.fromEntries(SCALINGS.filter((s) => !s.labOnly).map((s) => [s.type,
      pe.ropeFrequencies(ropeParams(st, extras, s.type), { dtype: 'float64' })]));
    const plain = freqs.none.invFreq;
    const pairs = Float64Array.from(plain, (_, i) => i);
    const stretch = SCALINGS.filter((s) => !s.labOnly).map((s) => ({ label: s.label, color: s.color, x: pairs,
      y: Float64Array.from(plain, (f, i) => f / freqs[s.type].invFreq[i]) }));
    const r = lab.shippedResult('markov');
    return { ...ntkBase(pe, st, extras, freqs.ntk.invFreq), pairs, stretch, theta: st.theta, s: st.factor,
      lTrain: st.lTrain, yarnA: freqs.yarn.attentionFactor, lab: r ? labSeries(r) : null };
  },
  plot: (data, cursor) => {
    const left = { title: 'how many times slower each pair turns', kind: 'lines', spec: { series: data.stretch,
      xLabel: 'rotary pair i (0 = fastest)', yLabel: 'slowed × (1 = as trained)', cursor: cursor?.panel === 0 ? cursor : null } };
    const right = data.lab
      ? { title: `the lab's RoPE model read longer (markov, ${data.lab.seeds} seeds, mean)`, kind: 'lines', spec: {
        series: data.lab.series, xLog: true, xTicks: data.lab.xs,
        xDomain: [data.lab.xs[0] / 1.15, data.lab.xs[data.lab.xs.length - 1] * 1.15],
        xLabel: 'evaluation length (tokens, log)', yLabel: 'loss (nats/token)', vlines: [{ x: data.lab.T, label: 'T_train' }],
        hlines: Number.isFinite(data.lab.floor) ? [{ y: data.lab.floor, label: 'floor' }] : [],
        cursor: cursor?.panel === 1 ? cursor : null } }
      : { title: 'the lab\'s RoPE model', kind: 'message', spec: { text: 'Loading the lab\'s shipped run…' } };
    return { kind: 'panels', spec: { minWidth: MIN_WIDTH, each: PANEL, cursor, panels: [left, right] } };
  },
  move: (data, c, key, layout) => moveLinePanelGrid(c, [data.pairs.length, data.lab ? data.lab.xs.length : 1], key, layout),
  cursor0: () => ({ panel: 0, i: 0 }),
  readout(data, c) {
    if (c.panel === 0) {
      return `pair ${c.i}: ${data.stretch.map((s) => `${s.label} ×${fmt(s.y[c.i], 4)}`).join(', ')}`;
    }
    const L = data.lab.xs[c.i];
    return `length ${L} (${L / data.lab.T} × T_train): ${data.lab.series.map((s) => `${s.label} ${fmt(s.y[c.i], 3)}`).join(', ')}`;
  },
  note: (data) => `NTK's base for θ ${n(data.theta)}, d ${data.d} and s ${+data.s.toPrecision(4)}: θ·s^(d/(d−2)) = `
    + `${n(+data.formula.toPrecision(8))}; read back from the package's frequencies: ${n(+data.base.toPrecision(8))}. `
    + `YaRN also multiplies cos and sin by ${fmt(data.yarnA, 4)}.`,
  html(data) {
    if (!data) return '';
    // Counted as the in-production view counts it: each pair's cos and sin once per position.
    const rowsTo = Math.round(data.lTrain * data.s), bytes = rowsTo * (data.d / 2) * 2 * 4;
    return `<p>NTK only changes the base: the cos/sin cache is as for plain RoPE, up to L_train × s = ${n(rowsTo)} `
      + `positions: ${data.d / 2} pairs' cos and sin, ${bytesText(bytes)} in float32 (HF's [${n(rowsTo)}, ${data.d}] `
      + `tables: ${bytesText(2 * bytes)}).</p>`;
  },
  csv: (data) => linesCsv('pair', data.pairs, data.stretch)
    + (data.lab ? `\n${linesCsv('length', data.lab.xs, data.lab.series)}` : ''),
  caption: (st) => `ntk head_dim=${st.dModel} theta=${st.theta} factor=${st.factor} L_train=${st.lTrain}`,
};
