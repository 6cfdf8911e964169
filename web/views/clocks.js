// Each pair's angle at one position, with angles never reached in training marked (chapter "long-context").
import { FONT, wrapText } from '../plot/core.js';
import { TWO_PI, csvLines, fmt } from './shared/numbers.js';
import { ropeParams, ropeRule } from '../settings/rope-settings.js';

function drawClocks(ctx, width, height, { data, cursor }, colors) {
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  ctx.font = FONT;
  const caption = wrapText(ctx, `position ${data.pos}: hand = angle of pair i (0 pointing right, counter-clockwise); `
    + 'red rim = never seen in training', width - 8);
  const n = data.clocks.length, avail = height - 6 - 16 * caption.length;
  // The largest square cells that fit all clocks above the caption line.
  let cols = 1, cell = 0;
  for (let c = 1; c <= n; c++) {
    const size = Math.min(width / c, avail / Math.ceil(n / c));
    if (size > cell) { cell = size; cols = c; }
  }
  // Each clock's pair number under it, down to 30 px cells (a phone's 11 across), the hand a little
  // shorter there so that the number clears the next row.
  const labelled = cell >= 30, small = cell <= 44;
  const r = Math.max(3, cell * (labelled && small ? 0.3 : 0.38));
  ctx.font = `${small ? 9 : 10}px "DejaVu Sans", sans-serif`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  const centres = data.clocks.map((k, idx) => {
    const cx = (idx % cols + 0.5) * cell, cy = Math.floor(idx / cols) * cell + cell / 2;
    ctx.lineWidth = k.unseen ? 3 : 1;
    ctx.strokeStyle = k.unseen ? colors.mark : colors.muted;
    ctx.beginPath(); ctx.arc(cx, cy, r, 0, TWO_PI); ctx.stroke();
    ctx.strokeStyle = colors.fg;
    ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(cx, cy); ctx.lineTo(cx + r * Math.cos(k.angle), cy - r * Math.sin(k.angle)); ctx.stroke();
    if (cursor && cursor.i === idx) {
      ctx.strokeStyle = colors.mark;
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
  // The clocks sit in rows of 8: up and down move a row.
  move: (d, c, key) => {
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowUp: -8, ArrowDown: 8, PageUp: 8, PageDown: -8 }[key] ?? 0;
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
