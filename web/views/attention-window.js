// Sliding windows, chunks and sinks on a causal attention map: HF's sliding_window (Mistral, Gemma
// local layers, gpt-oss), Llama 4's chunked RoPE layers, StreamingLLM's kept sink tokens and
// gpt-oss's learned sink logit (chapter "long-context"); the same sequence decoded token by token
// through a KV cache with the window (pe.kvCache) gives the same outputs from a few tokens held.
import { SEQUENTIAL, SERIES } from '../plot/colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { panelsHeight, squareHeight } from '../plot/panels.js';
import { movePanels } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { seededVectors } from './shared/vectors.js';

const D = 32, PANEL = 330, MIN_WIDTH = 360;
const MASKS = { causal: 'causal only', window: 'sliding window', chunk: 'chunked (Llama 4)' };
// The map is square; the line plot beside (or under) it takes the same height.
const each = (k, pw) => squareHeight(pw, { max: PANEL });

// Decodes the sequence as a server would: append token p to a KV cache, attend with query p. The
// cache holds W + sinkTokens tokens at most with a window (a ring), all n without. Returns the
// tokens held after each step and the largest difference from pe.attention's output rows.
function decode(pe, { q, k, v, n, theta, window, sinkTokens, sinks, output }) {
  const capacity = window ? window + sinkTokens : n;
  const cache = pe.kvCache({ nKvHeads: 1, headDim: D, capacity, rope: { headDim: D, theta },
    ...(window ? { window, sinkTokens } : {}) });
  const held = new Float64Array(n);
  let worst = 0;
  try {
    for (let p = 0; p < n; p++) {
      const row = (x) => x.subarray(p * D, (p + 1) * D);
      cache.append(row(k), row(v));
      const y = cache.attend(row(q), sinks ? { nHeads: 1, sinks } : { nHeads: 1 });
      held[p] = cache.length;
      for (let e = 0; e < D; e++) worst = Math.max(worst, Math.abs(y[e] - output[p * D + e]));
    }
  } finally {
    cache.delete();
  }
  return { held, worst, capacity };
}

// What decoding through the KV cache held and how close its outputs came (the note's last sentence).
function cacheSentence(data) {
  const kib = `${+((2 * data.cacheTokens * D * 4) / 1024).toFixed(2)} KiB of keys and values at D = ${D}, float32`;
  let held = `all ${data.n} tokens (${kib})`;
  if (data.mask === 'window' && data.sinkTokens) {
    held = `at most ${data.cacheTokens} tokens (W = ${data.size} and ${data.sinkTokens} sink tokens; ${kib})`;
  } else if (data.mask === 'window') held = `at most W = ${data.cacheTokens} tokens (${kib})`;
  const which = data.mask === 'window' ? ' with this window' : '';
  return `Decoded token by token through a KV cache (pe.kvCache${which}), the cache holds ${held} `
    + `and gives the same outputs as the full attention (largest difference ${data.cacheDiff.toExponential(1)}).`;
}

export default {
  id: 'attention-window',
  controls: [
    ['winMask', { kind: 'select', values: Object.keys(MASKS), labels: MASKS }],
    ['winSize', { label: 'window W', slider: { min: 1, max: 256, log: true }, when: (st) => st.winMask === 'window',
      whenText: 'with mask window' }],
    ['winChunk', { label: 'chunk', slider: { min: 1, max: 256, log: true }, when: (st) => st.winMask === 'chunk',
      whenText: 'with mask chunk' }],
    ['winSinkTokens', { label: 'sink tokens', when: (st) => st.winMask === 'window', whenText: 'with mask window' }],
    ['winSinkLogit', { kind: 'checkbox' }],
    ['winSinkValue', { label: 'sink logit', when: (st) => st.winSinkLogit, whenText: 'with the sink logit on' }],
    ['winLen', { label: 'positions shown', slider: { min: 4, max: 256, log: true } }],
  ],
  height: (width) => panelsHeight(2, width, each, MIN_WIDTH),
  compute({ pe, st }) {
    const n = st.winLen;
    // A seeded "sentence": queries, keys and values of its own, RoPE on q and k.
    const q = seededVectors(pe, n, D, 17), k = seededVectors(pe, n, D, 18), v = seededVectors(pe, n, D, 19);
    const options = { nHeads: 1, headDim: D, causal: true, returnWeights: true, rope: { headDim: D, theta: st.theta } };
    if (st.winMask === 'window') options.window = st.winSize;
    if (st.winMask === 'chunk') options.chunkSize = st.winChunk;
    // Sink tokens sit beside a rolling window (StreamingLLM): with a window only.
    const sinkTokens = st.winMask === 'window' ? st.winSinkTokens : 0;
    if (sinkTokens > 0) options.sinkTokens = sinkTokens;
    if (st.winSinkLogit) options.sinks = Float32Array.of(st.winSinkValue);
    const { output, weights } = pe.attention(q, k, v, options);
    // The KV cache has no chunk mode: the chunk mask is not decoded.
    const cache = st.winMask === 'chunk' ? null
      : decode(pe, { q, k, v, n, theta: st.theta, window: options.window, sinkTokens, sinks: options.sinks, output });
    // Heatmap columns are keys, rows queries; an exact 0 is a masked key (drawn grey).
    const values = new Float32Array(n * n), shown = new Float32Array(n * n);
    const xs = Float64Array.from({ length: n }, (_, i) => i);
    const sums = new Float64Array(n), seen = new Float64Array(n);
    let hi = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const w = weights[i * n + j];
        values[j * n + i] = w;
        shown[j * n + i] = w === 0 ? -Infinity : w;
        sums[i] += w;
        if (w !== 0) seen[i] += 1;
        if (i >= 4) hi = Math.max(hi, w);
      }
    }
    const series = [
      { label: 'Σ weight on keys', x: xs, y: sums, color: SERIES[0], width: 2.2 },
      { label: 'keys seen (right axis)', x: xs, y: seen, color: SERIES[1], axis: 2, step: true },
    ];
    // Dashed over "keys seen": the cache holds exactly the keys a query sees.
    if (cache) {
      series.push({ label: 'tokens the KV cache holds (right axis)', x: xs, y: cache.held, color: SERIES[2], axis: 2,
        step: true, dash: [6, 4], width: 2 });
    }
    return { n, values, shown, hi: hi || 1, series, xs, mask: st.winMask, size: st.winMask === 'chunk' ? st.winChunk : st.winSize,
      sinkTokens, sinkAside: sinkTokens ? 0 : st.winSinkTokens, sinkLogit: st.winSinkLogit ? st.winSinkValue : null,
      minSum: Math.min(...sums), y2Max: Math.max(...seen, ...(cache?.held ?? [])),
      cacheTokens: cache?.capacity ?? null, cacheDiff: cache?.worst ?? null };
  },
  plot: (data, cursor) => ({ kind: 'panels', spec: { minWidth: MIN_WIDTH, each,
    cursor: cursor && (cursor.panel === 1 ? { ...cursor, i: cursor.i ?? cursor.x } : cursor), panels: [
      { title: `attention weights: ${MASKS[data.mask]}${data.mask === 'causal' ? '' : ` ${data.size}`}`, kind: 'heatmap', spec: {
        values: data.shown, nx: data.n, ny: data.n, lo: 0, hi: data.hi, lut: SEQUENTIAL, square: true, yDown: true, xLabel: 'key position j',
        yLabel: 'query position p', legendLabel: 'weight (grey: 0, masked)' } },
      { title: 'per query', kind: 'lines', spec: { series: data.series, xLabel: 'query position p', yLabel: 'Σ weight',
        y2Label: data.series[2] ? 'keys seen, tokens held' : 'keys seen', yDomain: [0, 1.05],
        y2Domain: [0, data.y2Max + 1] } },
    ] } }),
  move(data, c, key) {
    const grids = [{ nx: data.n, ny: data.n, down: true }, { nx: data.n, ny: 1 }];
    const at = movePanels({ panel: c.panel, x: c.i ?? c.x, y: c.panel === 1 ? 0 : c.y }, grids, key);
    return at.panel === 1 ? { panel: 1, x: at.x, y: 0 } : at;
  },
  note(data) {
    const parts = [];
    const far = 5000;
    if (data.mask === 'window') {
      const at = Math.max(far, data.size * 2);
      parts.push(data.size >= data.n
        ? `The window W = ${data.size} is at least the ${data.n} positions drawn, so here it hides nothing; `
          + `at position ${at} a query would see keys ${at - data.size + 1} … ${at} only.`
        : `Window W = ${data.size}: the query at p sees keys p − ${data.size - 1} … p, a band ${data.size} wide; `
          + 'everything older is grey.');
    } else if (data.mask === 'chunk') {
      parts.push(data.size >= data.n
        ? `The chunk of ${data.size} is at least the ${data.n} positions drawn, so all of them share one chunk here.`
        : `Chunks of ${data.size}: a query sees only the keys of its own chunk, `
          + 'so the first query of each chunk sees itself alone.');
      parts.push('A KV cache has no chunk mode, so this mask is not decoded through one.');
    } else parts.push('Causal only: every query sees every key up to itself.');
    if (data.sinkAside) {
      parts.push(`The ${data.sinkAside} sink tokens are set aside: they sit beside a sliding window (StreamingLLM), `
        + 'so they apply with the window mask only.');
    }
    if (data.sinkTokens) parts.push(`Keys 0 … ${data.sinkTokens - 1} stay visible to every query (sink tokens).`);
    if (data.sinkLogit !== null) {
      parts.push(`Sink logit ${data.sinkLogit}: rows sum to as little as ${fmt(data.minSum, 3)}; `
        + 'the rest went to the sink, which carries no value.');
    }
    if (data.cacheTokens !== null) parts.push(cacheSentence(data));
    return parts.join(' ');
  },
  readout(data, c) {
    if (c.panel === 1) {
      const p = c.i ?? c.x;
      const held = data.series[2] ? `, ${data.series[2].y[p]} tokens in the KV cache` : '';
      return `query ${p}: Σ weight ${fmt(data.series[0].y[p], 5)}, ${data.series[1].y[p]} keys seen${held}`;
    }
    const w = data.values[c.x * data.n + c.y];
    const why = w !== 0 ? '' : c.x > c.y ? ' (the future: causal mask)' : ' (masked)';
    return `query ${c.y}, key ${c.x}: weight ${fmt(w, 5)}${why}`;
  },
  csv: (data) => heatmapCsv({ nx: data.n, ny: data.n, values: data.values }, 'key', 'query', 'weight'),
  caption: (st) => `attention-window mask=${st.winMask} W=${st.winSize} chunk=${st.winChunk} sinkTokens=${st.winSinkTokens} `
    + `sinkLogit=${st.winSinkLogit ? st.winSinkValue : 'off'} positions=${st.winLen} theta=${st.theta}`,
  cursor0: () => ({ panel: 0, x: 0, y: 8 }),
};
