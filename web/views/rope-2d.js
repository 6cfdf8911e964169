// 2-D axial RoPE of vision transformers (Pixtral, Llama-4 vision): half the pairs turned by the
// patch row, half by the column; the score of one patch's query against every patch's key, for the
// same content everywhere, next to 1-D RoPE over the patches in reading order (chapter "rope").
import { SEQUENTIAL, SERIES } from '../plot/colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { panelsHeight } from '../plot/panels.js';
import { drawStripPanels, stripHeight } from '../plot/strip.js';
import { moveStripPanels } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { dotRows, tile } from './shared/vectors.js';
import { OFFLOAD_VALUES } from '../page/offload.js';

const NAMES = ['row', 'column'];
const COLORS = [SERIES[3], SERIES[5]];
const PANEL = 300, MIN_WIDTH = 340;

/** The pairs of each axis and the two score maps, for args from compute: here or in the page's
 * compute worker (web/page/offload.js), which runs it past OFFLOAD_VALUES rotated values (patches ×
 * head_dim; 64 × 64 patches of 4096 take about 0.75 s). */
function work(pe, { d, h, w, row, col, theta }) {
  const n = h * w, query = row * w + col;
  // Which pairs each axis turns: a unit x-part rotated at (row 1, col 0) and (row 0, col 1).
  const unit = new Float32Array(d);
  unit.fill(1, 0, d / 2);
  const probe = pe.applyRope2d(tile(unit, 2), { nHeads: 1, headDim: d, positions: [1, 0, 0, 1], theta });
  const pairs = d / 2, groups = new Int8Array(pairs).fill(-1), thetas = new Float64Array(pairs);
  for (let i = 0; i < pairs; i++) {
    for (let a = 0; a < 2; a++) {
      const angle = Math.atan2(probe[a * d + i + pairs], probe[a * d + i]);
      if (angle !== 0) { groups[i] = a; thetas[i] = angle; }
    }
  }
  // The same content vector, all ones, as query and key at every patch: each pair then adds
  // 2·cos(offset·θ), so the maps show position alone (a random vector would weight the pairs
  // unevenly and tilt the picture towards one axis).
  const x = new Float32Array(n * d).fill(1);
  const two = pe.applyRope2d(x, { nHeads: 1, headDim: d, grid: [h, w], theta });
  const one = pe.applyRope(x, { seqLen: n, nHeads: 1, headDim: d, params: { headDim: d, theta } });
  // The query's score with the patch at row r, column c (k = r·w + c), x-major: [c][r].
  const scoreMap = (y) => {
    const s = dotRows(y.subarray(query * d, (query + 1) * d), y, 1, n, d);
    return Float32Array.from({ length: n }, (_, at) => s[(at % h) * w + Math.floor(at / h)] / Math.sqrt(d));
  };
  const maps = [
    { key: 'rope2d', title: '2-D axial RoPE (Pixtral)', values: scoreMap(two) },
    { key: 'rope1d', title: '1-D RoPE, patches in reading order', values: scoreMap(one) },
  ];
  // One colour scale for both maps, from their lowest to their highest score.
  let lo = Infinity, hi = -Infinity;
  for (const m of maps) for (const v of m.values) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  // Up and down vs left and right: the score one patch away along each axis, down (right) or, from
  // the last row (column), up (left); 0: the grid has no other row (column).
  const step = (i, n) => (i + 1 < n ? 1 : i > 0 ? -1 : 0);
  const dRow = step(row, h), dCol = step(col, w);
  const near = maps.map((m) => ({ row: m.values[col * h + row + dRow], col: m.values[(col + dCol) * h + row] }));
  return { d, pairs, groups, thetas, h, w, row, col, maps, lo, hi: hi > lo ? hi : lo + 1, near, dRow, dCol };
}

export default {
  id: 'rope-2d',
  controls: [
    ['grid2dH', { label: 'patch rows', slider: { min: 1, max: 64 } }],
    ['grid2dW', { label: 'patch columns', slider: { min: 1, max: 64 } }],
    ['grid2dRow', { label: 'query row' }],
    ['grid2dCol', { label: 'query column' }],
  ],
  height: (width) => stripHeight(width, NAMES) + panelsHeight(2, width, PANEL, MIN_WIDTH),
  work,
  compute({ pe, st, offload }) {
    const d = st.dModel;
    if (d % 4) {
      throw new Error('2-D RoPE gives half the pairs to rows and half to columns, so head_dim (d_model here) must be a multiple '
        + `of 4; ${d} is not.`);
    }
    const h = st.grid2dH, w = st.grid2dW;
    const args = { d, h, w, row: Math.min(st.grid2dRow, h - 1), col: Math.min(st.grid2dCol, w - 1), theta: st.theta };
    return h * w * d > OFFLOAD_VALUES ? offload('rope-2d', args) : work(pe, args);
  },
  plot(data, cursor, width) {
    // A phone gets the strip's caption short enough to stay legible on one line.
    const title = width < 600 ? `${data.pairs} pairs by axis, fastest first`
      : `${data.pairs} rotary pairs of one head, coloured by the axis that turns them (each axis: fastest first)`;
    return { kind: 'custom', spec: { draw: drawStripPanels, minWidth: MIN_WIDTH, cursor,
      strip: { title, groups: data.groups, colors: COLORS,
        legend: NAMES.map((name, a) => `${name} (${data.groups.filter((g) => g === a).length} pairs)`) },
      panels: data.maps.map((m) => ({ title: `${m.title}: query at row ${data.row}, column ${data.col}`, kind: 'heatmap', spec: {
        values: m.values, nx: data.w, ny: data.h, lo: data.lo, hi: data.hi, lut: SEQUENTIAL, square: true,
        xLabel: 'key patch column', yLabel: 'key patch row (0 at top)', yDown: true, legendLabel: 'q·k / √d' } })) } };
  },
  // The maps' row 0 at the top; up and down also between the strip and the maps.
  move: (data, c, key, layout) => moveStripPanels(c, data.pairs, data.maps.map(() => ({ nx: data.w, ny: data.h, down: true })),
    key, layout),
  note(data) {
    const [two, one] = data.near, { dRow, dCol } = data;
    const rowWord = dRow > 0 ? 'one row down' : 'one row up', colWord = dCol > 0 ? 'one column right' : 'one column left';
    const pair = (p) => [dRow && `${rowWord} ${fmt(p.row, 3)}`, dCol && `${colWord} ${fmt(p.col, 3)}`].filter(Boolean).join(', ');
    if (!dRow && !dCol) return 'One patch: no neighbour to score. Add rows or columns to see how the score falls along each axis.';
    return `Score from the query patch to its neighbours — 2-D: ${pair(two)}; 1-D reading order: ${pair(one)}`
      + `${dRow ? ` (a row is ${data.w} position${data.w === 1 ? '' : 's'} away there)` : ''}.`;
  },
  readout(data, c, st) {
    if (c.panel === -1) {
      return `pair ${c.x}: turned by the ${NAMES[data.groups[c.x]]}, θ = ${fmt(data.thetas[c.x], 6)} rad per patch `
        + `(θ = ${st.theta})`;
    }
    const m = data.maps[c.panel];
    return `${m.title}: key at row ${c.y}, column ${c.x} (Δrow ${c.y - data.row}, Δcolumn ${c.x - data.col}): `
      + `q·k/√d = ${fmt(m.values[c.x * data.h + c.y], 5)}`;
  },
  csv: (data) => data.maps.map((m) => heatmapCsv({ nx: data.w, ny: data.h, values: m.values }, 'column', 'row', m.key)).join(''),
  caption: (st) => `rope-2d grid=${st.grid2dH}x${st.grid2dW} query=(${st.grid2dRow},${st.grid2dCol}) head_dim=${st.dModel} `
    + `theta=${st.theta}`,
  cursor0: (data) => ({ panel: 0, x: data.col, y: data.row }),
};
