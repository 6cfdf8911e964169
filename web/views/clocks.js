// Each pair's angle at one position, with angles never reached in training marked (chapter "long-context").
import { FONT, wrapText } from '../plot/core.js';
import { TWO_PI, csvLines, fmt } from './shared/numbers.js';
import { ropeParams, ropeRule } from '../settings/rope-settings.js';

const MAX_CELL = 72, GRID = 264;  // a clock's largest cell, and the grid's largest height (px)
const captionOf = (pos) => `position ${pos}: hand = angle of pair i (0 = right, counter-clockwise); `
  + 'red rim = never seen in training';

// Square cells, at most MAX_CELL, that fit n clocks in width and in height: of the column counts
// whose cells are within 3 % of the largest, one with the fewest rows, and of those the largest cells.
function grid(n, width, height) {
  const layouts = Array.from({ length: n }, (_, k) => ({ cols: k + 1, rows: Math.ceil(n / (k + 1)) }))
    .map((g) => ({ ...g, cell: Math.min(MAX_CELL, width / g.cols, height / g.rows) }));
  const best = Math.max(...layouts.map((g) => g.cell));
  return layouts.filter((g) => g.cell >= 0.97 * best).reduce((a, g) => (g.rows < a.rows || (g.rows === a.rows && g.cell > a.cell) ? g : a));
}

// The canvas's height: the grid and its caption, so that no band is left empty at any width; the
// same height at any position (the caption's lines measured at the longest).
let measurer = null;
function clocksHeight(width, d) {
  const { rows, cell } = grid(d?.clocks.length ?? 64, width, GRID);
  measurer ??= new OffscreenCanvas(1, 1).getContext('2d');
  measurer.font = FONT;
  return Math.ceil(rows * cell) + 6 + 16 * wrapText(measurer, captionOf(1048576), width - 8).length;
}

function drawClocks(ctx, width, height, { data, cursor }, colors) {
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  ctx.font = FONT;
  const caption = wrapText(ctx, captionOf(data.pos), width - 8);
  const n = data.clocks.length, { cols, cell } = grid(n, width, Math.min(GRID, height - 6 - 16 * caption.length));
  // Each clock's pair number under it, down to 30 px cells (a phone's 11 across), the hand a little
  // shorter there so that the number clears the next row.
  const labelled = cell >= 30, small = cell <= 44;
  const r = Math.max(3, cell * (labelled && small ? 0.3 : 0.38));
  ctx.font = `${small ? 9 : 10}px "DejaVu Sans", sans-serif`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  const left = (width - cols * cell) / 2;  // the grid centred
  const centres = data.clocks.map((k, idx) => {
    const cx = left + (idx % cols + 0.5) * cell, cy = Math.floor(idx / cols) * cell + cell / 2;
    ctx.lineWidth = k.unseen ? 3 : 1;
    ctx.strokeStyle = k.unseen ? colors.mark : colors.muted;
    ctx.beginPath(); ctx.arc(cx, cy, r, 0, TWO_PI); ctx.stroke();
    ctx.strokeStyle = colors.fg;
    ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(cx, cy); ctx.lineTo(cx + r * Math.cos(k.angle), cy - r * Math.sin(k.angle)); ctx.stroke();
    if (cursor && cursor.i === idx) {  // not in the red of a rim never seen in training
      ctx.strokeStyle = colors.fg;
      ctx.lineWidth = 2;
      ctx.strokeRect(cx - cell / 2 + 1, cy - cell / 2 + 1, cell - 2, cell - 2);
    }
    if (labelled) { ctx.fillStyle = colors.muted; ctx.fillText(String(k.pair), cx, cy + r + 1); }
    return [cx, cy];
  });
  ctx.fillStyle = colors.fg;
  ctx.font = FONT;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'bottom';
  caption.forEach((line, i) => ctx.fillText(line, 4, height - 4 - 16 * (caption.length - 1 - i)));
  return {
    cols,
    hit(x, y) {
      let best = -1, bd = Infinity;
      centres.forEach(([cx, cy], i) => { const dd = (cx - x) ** 2 + (cy - y) ** 2; if (dd < bd) { bd = dd; best = i; } });
      return best >= 0 && bd <= cell * cell ? { i: best } : null;
    },
  };
}

export default {
  id: 'clocks',
  controls: [
    ['pos', { label: 'position', slider: { min: 1, max: 1048576, log: true } }],
    ['pos', { kind: 'play', label: 'play', suffix: '-play', play: { step: 512, max: 1048576, interval: 80 } }],
  ],
  compute({ pe, st, extras }) {
    const rule = ropeRule(st);
    if (rule) throw new Error(rule);
    const base = pe.ropeFrequencies(ropeParams(st, extras), { dtype: 'float64' }).invFreq;
    const scaled = pe.ropeFrequencies(ropeParams(st, extras, st.scaling, true),
      { seqLen: Math.max(st.pos + 1, st.lTarget), dtype: 'float64' }).invFreq;
    const { cos, sin } = pe.ropeCache({ invFreq: scaled, positions: [st.pos], precision: st.precision });
    const n = cos.length, shown = Math.min(n, 64);
    const pairs = Array.from({ length: shown }, (_, k) => Math.round((k * (n - 1)) / Math.max(1, shown - 1)));
    const clocks = pairs.map((i) => {
      const angle = Math.atan2(sin[i], cos[i]);
      const seenUpTo = st.lTrain * base[i];  // the angle range training covered
      const wrapped = ((angle % TWO_PI) + TWO_PI) % TWO_PI;
      return { pair: i, angle, wavelength: TWO_PI / scaled[i], unseen: seenUpTo < TWO_PI && wrapped > seenUpTo };
    });
    return { clocks, pos: st.pos, pairs: n };
  },
  plot: (d, cursor) => ({ kind: 'custom', spec: { draw: drawClocks, data: d, cursor } }),
  height: clocksHeight,
  // Up and down move a row of the grid as drawn (its columns depend on the width); PageUp and
  // PageDown two rows on and back (the page's big steps: PageUp goes on), Home and End to the ends.
  move: (d, c, key, layout) => {
    const row = layout?.cols ?? 8;
    if (key === 'Home' || key === 'End') return { i: key === 'Home' ? 0 : d.clocks.length - 1 };
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowUp: -row, ArrowDown: row, PageUp: 2 * row, PageDown: -2 * row }[key] ?? 0;
    return { i: Math.max(0, Math.min(d.clocks.length - 1, c.i + step)) };
  },
  note: (d) => (d.clocks.length < d.pairs ? `${d.clocks.length} of ${d.pairs} pairs shown, evenly spaced.` : ''),
  readout: (d, c) => {
    const k = d.clocks[c.i];
    const unseen = d.clocks.filter((x) => x.unseen).length;
    return `pos ${d.pos}, pair ${k.pair}: angle ${fmt(k.angle, 5)} rad, wavelength ${fmt(k.wavelength, 4)}`
      + `${k.unseen ? ' — never seen in training' : ''}; ${unseen} of ${d.clocks.length} shown pairs unseen`;
  },
  csv: (d) => csvLines(['pair', 'angle_rad', 'wavelength', 'unseen_in_training'],
    d.clocks.map((k) => [k.pair, k.angle, k.wavelength, k.unseen ? 1 : 0])),
  caption: (st) => `rope clocks pos=${st.pos} theta=${st.theta} scaling=${st.scaling} L_train=${st.lTrain} `
    + `precision=${st.precision}`,
  cursor0: () => ({ i: 0 }),
};
