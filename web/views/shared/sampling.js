// Which positions a plot computes and draws: at most LOD_COLUMNS across and CELLS numbers per
// table, so that a redraw stays short at any seq_len, and the note that says when it samples.
// sinusoidalRows: the sinusoidal table at those positions, computed once per redraw.
import { nth } from './numbers.js';

const LOD_COLUMNS = 2048;  // at most this many positions are computed and drawn across
const CELLS = 2 ** 22;     // and at most this many numbers per table

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
  return `Sampled: every ${nth(stride)} of ${total} ${what} is drawn (${xs.length} columns), `
    + `so waves faster than ${2 * stride} positions alias.`;
}

/** The sinusoidal table for these positions, computed once per redraw (memo). */
export function sinusoidalRows({ pe, st, memo }, positions) {
  const key = `sinusoidal ${st.dModel} ${st.base} ${st.sinLayout} ${positions.length} ${positions[positions.length - 1]}`;
  return memo(key, () => pe.sinusoidal(positions.length, st.dModel, { base: st.base, layout: st.sinLayout, positions }));
}
