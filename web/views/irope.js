// Llama 4's iRoPE: the NoPE layers' attention temperature against position (chapter "long-context").
import { SERIES } from '../colormap.js';
import { linesCsv } from '../plot/lines.js';
import { fmt } from './common.js';

const SAMPLES = 1200;

export default {
  id: 'irope',
  title: 'Llama 4\'s iRoPE: a temperature that grows with position',
  explain: 'Llama 4 mixes two kinds of layers. Three in four are RoPE layers that attend only within chunks of 8192 tokens, so their angles never leave the range seen in training. Every fourth layer has no positions at all (NoPE) and sees the whole context; the causal mask still tells it the order. Over a long context its softmax spreads over very many keys and goes flat, so Llama 4 multiplies each query at position p by log(⌊(p + 1) / floor_scale⌋ + 1) · attn_scale + 1: 1 for the first floor_scale − 1 positions, then a slow staircase. A larger multiplier sharpens attention: two keys whose scores differ by 1 get weights e<sup>scale</sup> apart instead of e (right axis).',
  controls: [
    ['iropeFloor', { label: 'floor_scale', slider: { min: 16, max: 65536, log: true } }],
    ['iropeAttn', { label: 'attn_scale', slider: { min: 0.01, max: 1, log: true } }],
    ['iropeSpan', { label: 'positions up to × floor_scale', slider: { min: 2, max: 1024, log: true } }],
  ],
  compute({ pe, st }) {
    const last = st.iropeFloor * st.iropeSpan;
    // Log-spaced integer positions, with both sides of every step while there are few.
    const set = new Set();
    for (let k = 0; k < SAMPLES; k++) set.add(Math.round(last ** (k / (SAMPLES - 1))));
    if (st.iropeSpan <= 256) for (let m = 1; m <= st.iropeSpan; m++) { set.add(m * st.iropeFloor - 2); set.add(m * st.iropeFloor - 1); }
    const xs = Float64Array.from([...set].filter((p) => p >= 1 && p <= last).sort((a, b) => a - b));
    const scale = pe.iropeScale(xs, { floorScale: st.iropeFloor, attnScale: st.iropeAttn });
    const ratio = Float64Array.from(scale, (s) => Math.exp(s));
    return { xs, last, floor: st.iropeFloor, attn: st.iropeAttn, at: (p) => pe.iropeScale(p, { floorScale: st.iropeFloor, attnScale: st.iropeAttn }), series: [
      { label: 'query multiplier (NoPE layers)', x: xs, y: scale, color: SERIES[0], step: true, width: 2.4 },
      { label: 'weight ratio for a score gap of 1 (right axis)', x: xs, y: ratio, color: SERIES[1], axis: 2, step: true, dash: [5, 3] },
    ] };
  },
  plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, xLog: true, xLabel: 'position p (log)', yLabel: 'multiplier on q', y2Label: 'e^multiplier', cursor,
    vlines: [{ x: d.floor, label: `floor_scale ${d.floor}`, color: SERIES[3] }], hlines: [{ y: 1, label: 'RoPE layers: 1 (no temperature)' }] } }),
  note: (d) => `Multiplier at position ${Math.max(0, d.floor - 2)}: ${fmt(d.at(Math.max(0, d.floor - 2)), 4)}; at ${d.floor - 1} (where (p + 1) / floor_scale reaches 1): ${fmt(d.at(d.floor - 1), 4)}; at ${d.last}: ${fmt(d.at(d.last), 4)} (attn_scale ${d.attn}).`,
  readout: (d, c) => `position ${d.xs[c.i]}: q × ${fmt(d.series[0].y[c.i], 5)}; a score gap of 1 becomes a weight ratio of ${fmt(d.series[1].y[c.i], 4)}`,
  csv: (d) => linesCsv('position', d.xs, d.series),
  caption: (st) => `irope temperature floor_scale=${st.iropeFloor} attn_scale=${st.iropeAttn} up to ${st.iropeFloor * st.iropeSpan}`,
  cursor0: (d) => ({ i: d.xs.length - 1 }),
};
