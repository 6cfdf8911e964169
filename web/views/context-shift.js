// llama.cpp's context shift: keys cached at positions Δ … Δ+N−1 and moved back by Δ with the KV
// cache's shift (pe.kvCache) equal keys appended at their new positions; left alone, they give the
// next query wrong scores (chapter "long-context").
import { SERIES } from '../plot/colormap.js';
import { linesCsv } from '../plot/lines.js';
import { moveIndex } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { ropeParams, ropeRule } from '../settings/rope-settings.js';
import { dotRows, seededVectors } from './shared/vectors.js';
import { OFFLOAD_VALUES } from '../page/offload.js';

const largestDifference = (a, b) => a.reduce((m, x, e) => Math.max(m, Math.abs(x - b[e])), 0);

// Two caches of the same n tokens: one filled at positions Δ … Δ+n−1 and shifted by −Δ (nothing
// sits at 0 … Δ−1, so nothing is dropped), one filled at 0 … n−1. Their keys before and after the
// shift, and the next query's attention output (at position n) through each.
function caches(pe, { d, n, delta, rope, q }) {
  // A different word at every position; its key serves as its value too (one table fewer to draw).
  const keys = seededVectors(pe, n, d, 52), values = keys;
  const from = (p0) => Array.from({ length: n }, (_, j) => p0 + j);
  const next = { nHeads: 1, positions: [n] };
  const moved = pe.kvCache({ nKvHeads: 1, headDim: d, capacity: n, rope });
  let fresh = null;
  try {
    fresh = pe.kvCache({ nKvHeads: 1, headDim: d, capacity: n, rope });
    moved.append(keys, values, { positions: from(delta) });
    const cached = moved.read().k;
    // Not shifted, the keys still sit at Δ + j, after the query: no causal mask, as a cache that was never moved.
    const staleOut = moved.attend(q, { ...next, causal: false });
    moved.shift(-delta, { keep: 0 });
    const shifted = moved.read().k;
    fresh.append(keys, values, { positions: from(0) });
    const recomputed = fresh.read().k;
    const out = fresh.attend(q, next);
    return { cached, shifted, recomputed, outShifted: largestDifference(moved.attend(q, next), out),
      outStale: largestDifference(staleOut, out) };
  } finally {
    moved.delete();
    fresh?.delete();
  }
}

/** The caches, scores and differences drawn, for args { d, n, delta, rope }: here or in the page's
 * compute worker (web/page/offload.js), which runs it past OFFLOAD_VALUES key values (N × head_dim;
 * 2048 × 4096 takes about 1.5 s, the defaults' 64 × 128 a few ms). */
function work(pe, { d, n, delta, rope }) {
  const q = seededVectors(pe, 1, d, 51);
  const k = caches(pe, { d, n, delta, rope, q });
  // The next query, turned at position n as the caches' attend turns it, for the scores drawn.
  const query = pe.applyRope(q, { seqLen: 1, nHeads: 1, headDim: d, ...rope, positions: [n] });
  const scores = (keys) => dotRows(query, keys, 1, n, d).map((s) => s / Math.sqrt(d));
  const xs = Float64Array.from({ length: n }, (_, j) => j);
  const series = [
    { label: 'recomputed at the new positions', x: xs, y: scores(k.recomputed), color: SERIES[0], width: 3 },
    { label: 'cached, shifted by −Δ (cache.shift)', x: xs, y: scores(k.shifted), color: SERIES[2], dash: [5, 4],
      width: 1.6 },
    { label: 'cached, not shifted (stale)', x: xs, y: scores(k.cached), color: SERIES[1], dash: [2, 3], width: 1.2 },
  ];
  const worst = largestDifference(k.shifted, k.recomputed), stale = largestDifference(series[2].y, series[0].y);
  const { outShifted, outStale } = k;
  return { xs, series, worst, stale, outShifted, outStale, n, delta, precision: rope.precision };
}

export default {
  id: 'context-shift',
  work,
  controls: [
    ['shiftDelta', { label: 'tokens dropped Δ', slider: { min: 1, max: 65536, log: true } }],
    ['shiftKeep', { label: 'tokens kept N', slider: { min: 2, max: 2048, log: true } }],
  ],
  compute({ pe, st, extras, offload }) {
    const rule = ropeRule(st);
    if (rule) throw new Error(rule);
    const args = { d: st.dModel, n: st.shiftKeep, delta: st.shiftDelta,
      rope: { params: ropeParams(st, extras, st.scaling, true), layout: st.layout, precision: st.precision } };
    return args.n * args.d > OFFLOAD_VALUES ? offload('context-shift', args) : work(pe, args);
  },
  plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, xLabel: 'key position after the shift',
    yLabel: 'score of the next query, q·k / √d', cursor } }),
  move: (d, c, key) => moveIndex(c, d.xs.length, key),
  note: (d) => `A KV cache (pe.kvCache) held the ${d.n} keys turned at positions ${d.delta} … ${d.delta + d.n - 1}; `
    + `cache.shift(−${d.delta}) moved them to 0 … ${d.n - 1}, turning each key back by ${d.delta} `
    + `position${d.delta === 1 ? '' : 's'}. `
    + `Largest difference between shifted and recomputed keys: ${d.worst.toExponential(1)} (rounding: precision `
    + `${d.precision} forms the angles of positions up to ${d.delta + d.n - 1} `
    + `${d.precision === 'fast' ? 'in float32, see the precision view' : 'in float64'}); `
    + `the stale cache is off by up to ${fmt(d.stale, 3)} in a score. The next query's attention output from the `
    + `cache (cache.attend) is off by ${fmt(d.outStale, 3)} when stale, ${d.outShifted.toExponential(1)} when shifted.`,
  readout: (d, c) => `key ${d.xs[c.i]} (cached at ${d.delta + d.xs[c.i]}): recomputed ${fmt(d.series[0].y[c.i], 5)}, `
    + `shifted ${fmt(d.series[1].y[c.i], 5)}, stale ${fmt(d.series[2].y[c.i], 5)}`,
  csv: (d) => linesCsv('key_position', d.xs, d.series),
  caption: (st) => `context shift delta=${st.shiftDelta} kept=${st.shiftKeep} head_dim=${st.dModel} theta=${st.theta} `
    + `scaling=${st.scaling} precision=${st.precision}`,
  cursor0: (d) => ({ i: d.xs.length - 1 }),
};
