// The rotation property: M_k · PE(pos) = PE(pos + k) (chapter "sinusoidal").
import { SERIES } from '../plot/colormap.js';
import { linesCsv } from '../plot/lines.js';
import { panelsHeight } from '../plot/panels.js';
import { moveIndex } from '../plot/cursor.js';
import { TWO_PI, fmt } from './shared/numbers.js';
import { dotRows } from './shared/vectors.js';
import { pairRule, pastLastPair } from './shared/pairs.js';

const MIN_WIDTH = 420;
// M_k has d_model² entries: 1,048,576 at this width, 16.8 million at the page's largest d_model,
// more than a view should build while a reader waits.
const MAX_D = 1024;
// The last M_k, kept while k, d_model, base and layout stay (it is d_model² numbers).
let lastShift = { key: '', m: null };

function pairDims(i, d, layout) {
  return layout === 'interleaved' ? [2 * i, 2 * i + 1] : [i, i + d / 2];
}

export default {
  id: 'shift',
  controls: [
    ['shiftPos', { label: 'pos', slider: { min: 0, max: 1000 } }],
    ['shiftK', { label: 'shift k', slider: { min: -50, max: 50 } }],
    ['shiftPair', { label: 'pair i', slider: (st) => ({ min: 0, max: Math.max(0, Math.floor(st.dModel / 2) - 1) }),
      validate: (v, st) => pairRule(v, Math.floor(st.dModel / 2), `d_model ${st.dModel}`) }],
  ],
  height: (width) => panelsHeight(2, width, 280, MIN_WIDTH),
  compute({ pe, st }) {
    const d = st.dModel;
    if (d % 2) {
      throw new Error(`M_k rotates (sin, cos) pairs, so d_model must be even; ${d} is odd. `
        + '(The worked example above uses d_model 8.)');
    }
    if (d > MAX_D) {
      throw new Error(`M_k is a d_model × d_model matrix, ${(d * d).toLocaleString('en-US')} numbers at d_model ${d}: `
        + `this view builds it up to d_model ${MAX_D}. The property holds at every width: pairs never mix.`);
    }
    const opts = { base: st.base, layout: st.sinLayout };
    const key = `${st.shiftK} ${d} ${st.base} ${st.sinLayout}`;
    if (lastShift.key !== key) lastShift = { key, m: pe.sinusoidalShift(st.shiftK, d, opts) };
    const { m } = lastShift;
    const p = pe.sinusoidal(1, d, { ...opts, positions: [st.shiftPos] });
    const target = pe.sinusoidal(1, d, { ...opts, positions: [st.shiftPos + st.shiftK] });
    const mapped = dotRows(m, p, d, 1, d);  // M·p
    let worst = 0;
    for (let r = 0; r < d; r++) worst = Math.max(worst, Math.abs(mapped[r] - target[r]));
    const pair = Math.min(st.shiftPair, d / 2 - 1);
    const [ds, dc] = pairDims(pair, d, st.sinLayout);
    const omega = 1 / st.base ** ((2 * pair) / d);
    const xs = Float64Array.from({ length: d }, (_, i) => i);
    return { d, pair, asked: st.shiftPair, ds, dc, omega, p, target, mapped, worst, xs, pos: st.shiftPos, k: st.shiftK };
  },
  plot(data, cursor) {
    const { p, target, mapped, ds, dc } = data;
    const a0 = Math.atan2(p[ds], p[dc]), a1 = Math.atan2(target[ds], target[dc]);
    const circle = { title: `pair ${data.pair}: (cos, sin) of pos·ω, ω = ${fmt(data.omega, 4)}`, kind: 'circle', spec: {
      vectors: [
        { x: p[dc], y: p[ds], color: '#999999', label: `PE(${data.pos})`, dash: [4, 3] },
        { x: target[dc], y: target[ds], color: SERIES[0], label: `PE(${data.pos + data.k})` },
        { x: mapped[dc], y: mapped[ds], color: SERIES[1], hollow: true, width: 1 },
      ],
      arcs: [{ from: a0, to: a0 + ((((a1 - a0) % TWO_PI) + 3 * Math.PI) % TWO_PI) - Math.PI, radius: 0.35, color: SERIES[2] }],
      caption: `turned by k·ω = ${fmt(data.k * data.omega, 4)} rad; ring: M_k·PE(${data.pos})` } };
    const title = `all ${data.d} dimensions: max |M_k·PE(pos) − PE(pos+k)| = ${fmt(data.worst, 2)}`;
    const lines = { title, kind: 'lines', spec: {
      series: [
        { label: `PE(${data.pos + data.k})`, x: data.xs, y: target, color: SERIES[0], width: 3 },
        { label: `M_k · PE(${data.pos})`, x: data.xs, y: mapped, color: SERIES[1], dash: [5, 4] },
      ], xLabel: 'dimension', yLabel: 'value', yDomain: [-1.1, 1.1], cursor: null } };
    return { kind: 'panels', spec: { minWidth: MIN_WIDTH, cursor: cursor && { ...cursor, panel: 1 }, panels: [circle, lines] } };
  },
  move: (data, c, key) => ({ panel: 1, ...moveIndex(c, data.d, key) }),
  note: (data) => `${pastLastPair(data.asked, data.pair, `d_model ${data.d}`)}Largest error over the whole vector: `
    + `${fmt(data.worst, 3)} (float32 rounding): the shift matrix does not depend on pos.`,
  readout: (data, c) => `dim ${c.i}: PE(${data.pos + data.k}) = ${fmt(data.target[c.i])}, `
    + `M_k·PE(${data.pos}) = ${fmt(data.mapped[c.i])}`,
  csv: (data) => linesCsv('dim', data.xs,
    [{ label: 'pe_pos_plus_k', y: data.target }, { label: 'mk_times_pe_pos', y: data.mapped }]),
  caption: (st) => `shift pos=${st.shiftPos} k=${st.shiftK} d_model=${st.dModel} base=${st.base}`,
  cursor0: () => ({ panel: 1, i: 0 }),
};
