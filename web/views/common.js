// Helpers the views share: which positions a plot samples, the RoPE parameters the settings
// describe, number formatting, and the seeded random vectors some views use as "content".
// No encoding is computed here: those all come from the posenc package.
export const TWO_PI = 2 * Math.PI;
const LOD_COLUMNS = 2048;  // at most this many positions are computed and drawn across
const CELLS = 2 ** 22;           // and at most this many numbers per table, so a redraw stays short

/** Columns for a table of `rows` numbers per position: LOD_COLUMNS, fewer for tall tables. */
export const columnsFor = (rows) => Math.max(64, Math.min(LOD_COLUMNS, Math.floor(CELLS / rows)));

/** `count` integers from 0 in steps of one integer stride covering [0, last] (all when last < count). */
export function samplePositions(last, count = LOD_COLUMNS) {
  if (last + 1 <= count) return Float64Array.from({ length: last + 1 }, (_, i) => i);
  const stride = Math.ceil(last / (count - 1));
  const n = Math.floor(last / stride) + 1;
  return Float64Array.from({ length: n }, (_, i) => i * stride);
}

/** A note for plots that draw fewer columns than positions. */
export function samplingNote(xs, total, what = 'positions') {
  if (xs.length >= total) return '';
  const stride = xs.length > 1 ? xs[1] - xs[0] : 1;
  return `Sampled: every ${stride}th of ${total} ${what} is drawn (${xs.length} columns), so waves faster than ${2 * stride} positions alias.`;
}

/**
 * A model file's extra RoPE inputs (freq_factors, LongRoPE's context length) apply while d_model
 * and partial rotary are still the file's.
 */
export function fileRope(st, extras) {
  const r = extras.ropeFile;
  return r && r.headDim === st.dModel && r.partial === st.partial ? r : null;
}

/**
 * The RoPE parameters of the settings, unscaled (the rope chapter) or with a scaling; `own`: the
 * model's own frequencies, with what a model file adds (fileRope).
 */
export function ropeParams(st, extras, scaling = 'none', own = false) {
  const base = { headDim: st.dModel, theta: st.theta, partialRotaryFactor: st.partial };
  const file = own ? fileRope(st, extras) : null;
  if (file?.freqFactors) base.freqFactors = file.freqFactors;
  const s = { type: scaling };
  const factor = st.factor;
  if (scaling === 'none') return base;
  if (scaling === 'linear' || scaling === 'ntk') s.factor = factor;
  if (scaling === 'dynamic') Object.assign(s, { factor, maxPositionEmbeddings: st.lTrain });
  if (scaling === 'yarn') Object.assign(s, { factor, originalMaxPositionEmbeddings: st.lTrain, betaFast: st.betaFast, betaSlow: st.betaSlow, truncate: st.truncate });
  if (scaling === 'llama3') Object.assign(s, { factor, originalMaxPositionEmbeddings: st.lTrain, lowFreqFactor: st.lowFreq, highFreqFactor: st.highFreq });
  if (scaling === 'longrope') {
    const f = extras.longFactors;
    if (!f) throw new Error('LongRoPE needs its per-pair factors: choose the Phi-3.5 model or paste a LongRoPE config.');
    // HF's LongRoPE factor is max_position_embeddings / original: L_target / L_train here.
    Object.assign(s, { originalMaxPositionEmbeddings: st.lTrain, maxPositionEmbeddings: st.lTarget, shortFactor: f.shortFactor, longFactor: f.longFactor });
    if (file?.contextLength) s.contextLength = file.contextLength;
  }
  return { ...base, scaling: s };
}

/** RoPE needs pairs: the rule, worded for a learner, or '' when d_model is fine. */
export function ropeRule(st) {
  return st.dModel % 2 ? `RoPE turns dimensions in pairs, so head_dim (d_model here) must be even; ${st.dModel} is odd. Choose an even d_model in the settings.` : '';
}

// Read-out numbers: `digits` decimals, or as many significant digits in exponent form.
export function fmt(v, digits = 6) {
  if (v === -Infinity) return '−∞';
  if (!Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-4 && v !== 0) ? v.toExponential(Math.min(digits, 3)) : v.toFixed(digits);
}

export function csvLines(header, rows) {
  return `${header.join(',')}\n${rows.map((r) => r.join(',')).join('\n')}\n`;
}

/** Seeded N(0, std²) vectors [n][d] from the package's initializer (the learned-table one). */
export function seededVectors(pe, n, d, seed, std = 1) {
  return pe.learnedTable(n, d, { seed, std }).weights;
}

/** ALiBi's heads, steepest slope first (with a head count not a power of two the extra heads interleave). */
export function headsBySlope(slopes) {
  return Array.from(slopes.keys()).sort((a, b) => slopes[b] - slopes[a] || a - b);
}

/** n copies of vector x, one after another (the same content at n positions). */
export function tile(x, n) {
  const out = new Float32Array(n * x.length);
  for (let i = 0; i < n; i++) out.set(x, i * x.length);
  return out;
}

/** The sinusoidal table for these positions, computed once per redraw (memo). */
export function sinusoidalRows({ pe, st, memo }, positions) {
  const key = `sinusoidal ${st.dModel} ${st.base} ${st.sinLayout} ${positions.length} ${positions[positions.length - 1]}`;
  return memo(key, () => pe.sinusoidal(positions.length, st.dModel, { base: st.base, layout: st.sinLayout, positions }));
}

/** Largest change along any diagonal of an n × n matrix (0 when every diagonal is constant). */
export function diagonalSpread(values, n) {
  let spread = 0;
  for (let i = 0; i + 1 < n; i++) for (let j = 0; j + 1 < n; j++) spread = Math.max(spread, Math.abs(values[i * n + j] - values[(i + 1) * n + j + 1]));
  return spread;
}

/** Moves a grid cursor { x, y } for a key: arrows by one, PageUp/PageDown by a tenth, Home/End to the ends. */
export function moveGrid(c, nx, ny, key) {
  const big = Math.max(1, Math.round(nx / 10));
  const clamp = (v, n) => Math.max(0, Math.min(n - 1, v));
  const dx = { ArrowRight: 1, ArrowLeft: -1, PageUp: big, PageDown: -big }[key] ?? 0;
  const dy = { ArrowUp: 1, ArrowDown: -1 }[key] ?? 0;
  if (key === 'Home') return { ...c, x: 0 };
  if (key === 'End') return { ...c, x: nx - 1 };
  return { ...c, x: clamp(c.x + dx, nx), y: clamp(c.y + dy, ny) };
}

/** Moves an index cursor { i } over n points. */
export function moveIndex(c, n, key) {
  const big = Math.max(1, Math.round(n / 10));
  const d = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: big, PageDown: -big }[key] ?? 0;
  if (key === 'Home') return { ...c, i: 0 };
  if (key === 'End') return { ...c, i: n - 1 };
  return { ...c, i: Math.max(0, Math.min(n - 1, c.i + d)) };
}

/** Moves a panel cursor { panel, x, y }: within the panel, and on to the next one at an edge. */
export function movePanels(c, grids, key) {
  const g = grids[c.panel];
  const at = moveGrid(c, g.nx, g.ny, key);
  if (key === 'ArrowRight' && c.x === g.nx - 1 && c.panel + 1 < grids.length) return { panel: c.panel + 1, x: 0, y: Math.min(c.y, grids[c.panel + 1].ny - 1) };
  if (key === 'ArrowLeft' && c.x === 0 && c.panel > 0) return { panel: c.panel - 1, x: grids[c.panel - 1].nx - 1, y: Math.min(c.y, grids[c.panel - 1].ny - 1) };
  return at;
}
