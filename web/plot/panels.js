// Several small plots in one canvas (side by side when wide, stacked on a phone, each row as tall
// as its panels need), small labelled matrices with their numbers printed, vectors on a unit
// circle, and labelled bars. One canvas per view keeps
// hover, the keyboard cursor and PNG export the same for every view.
import { FONT, SMALL, drawMessage, wrapText } from './core.js';
import { legible } from './legible.js';
import { drawHeatmap, lutColor } from './heatmap.js';
import { drawLines } from './lines.js';

const TITLE = 20, GAP = 14;  // title band above each panel, space between panels
// On a phone the panels of a view stack; each is then drawn at this share of the height it asks
// for, so a view of three maps is not three screens tall.
const PHONE = 480, STACKED = 0.7;

/** Columns for `n` panels at this width: all in a row when each gets at least `minWidth` px. */
function panelColumns(n, width, minWidth = 300) {
  return Math.max(1, Math.min(n, Math.floor(width / minWidth)));
}

/**
 * The rows of `n` panels at this width: { cols, pw (a column's width), rows: [height of each row,
 * title band included] }. each: a panel's height, or (k, pw) → panel k's height in a column pw
 * wide; a row is as tall as its tallest panel, so a square map does not leave a gap under it.
 */
function panelRows(n, width, each, minWidth) {
  const cols = panelColumns(n, width, minWidth), pw = width / cols;
  const want = typeof each === 'function' ? each : () => each;
  const squeeze = cols === 1 && n > 1 && width < PHONE ? STACKED : 1;
  const rows = [];
  for (let r = 0; r * cols < n; r++) {
    let h = 0;
    for (let k = r * cols; k < Math.min(n, (r + 1) * cols); k++) h = Math.max(h, want(k, pw));
    rows.push(Math.ceil(h * squeeze) + TITLE);
  }
  return { cols, pw, rows };
}

/** Canvas height for `n` panels of `each` px (or each(k, pw) px) at this width. */
export function panelsHeight(n, width, each, minWidth) {
  return panelRows(n, width, each, minWidth).rows.reduce((a, b) => a + b, 0);
}

/**
 * The height a heatmap panel needs in a column `pw` wide when its cells are square: its map is as
 * tall as it is wide times rows/columns (core.js frame: about 52 px of y labels on the left, the
 * colour bar's 80 px or 10 on the right, 14 above and 46 below), at most `max`.
 */
export function squareHeight(pw, { max, aspect = 1, legend = true, min = 120 }) {
  const side = (pw - GAP - 52 - (legend ? 80 : 10)) * aspect;
  return Math.max(min, Math.min(max, 14 + side + 46));
}

const DRAW = { heatmap: drawHeatmap, lines: drawLines, matrix: drawMatrix, circle: drawCircle, bars: drawBars,
  message: (c, w, h, s, col) => drawMessage(c, w, h, s.text, col) };

/**
 * spec: { panels: [{ title, kind: 'heatmap' | 'lines' | 'matrix' | 'circle' | 'bars' | 'message', spec }], minWidth,
 * each (as panelRows takes it: row heights follow it; without it the rows share the height evenly),
 * cursor: { panel, ... } }. Returns { hit, panels: [{ box, layout }] } (each panel's place and its own layout).
 */
export function drawPanels(ctx, width, height, spec, colors) {
  const n = spec.panels.length;
  const layout = spec.each ? panelRows(n, width, spec.each, spec.minWidth) : null;
  const cols = layout ? layout.cols : panelColumns(n, width, spec.minWidth);
  const rowCount = Math.ceil(n / cols);
  const pw = width / cols;
  // Row tops and heights: as panelRows asked (scaled to the canvas), or even.
  const want = layout ? layout.rows : Array.from({ length: rowCount }, () => height / rowCount);
  const scale = height / (want.reduce((a, b) => a + b, 0) || 1);
  const tops = [];
  want.reduce((y, h) => { tops.push(y); return y + h * scale; }, 0);
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  const layouts = spec.panels.map((p, k) => {
    const r = Math.floor(k / cols), ph = want[r] * scale;
    const box = { x: (k % cols) * pw, y: tops[r], w: pw, h: ph };
    ctx.save();
    ctx.translate(box.x, box.y);
    ctx.font = FONT;
    ctx.fillStyle = colors.fg;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.fillText(p.title, 8, 4, pw - 16);
    ctx.translate(0, TITLE);
    const cursor = spec.cursor && spec.cursor.panel === k ? spec.cursor : null;
    const sub = { ...p.spec, cursor };
    const drawn = DRAW[p.kind](ctx, pw - GAP, ph - TITLE, sub, colors);
    ctx.restore();
    return { box, layout: drawn };
  });
  return {
    panels: layouts,
    hit(cx, cy) {
      for (let k = 0; k < n; k++) {
        const { box, layout: l } = layouts[k];
        if (cx < box.x || cx >= box.x + box.w || cy < box.y || cy >= box.y + box.h) continue;
        const c = l.hit?.(cx - box.x, cy - box.y - TITLE);
        return c ? { panel: k, ...c } : null;
      }
      return null;
    },
  };
}

/**
 * Horizontal bars, one per row, each with its label on the left and its value printed after it.
 * spec: { bars: [{ label, value, text, color }], max (the axis end; default the largest value),
 *         cursor: { i } }
 */
function drawBars(ctx, width, height, spec, colors) {
  ctx.font = FONT;
  const bars = spec.bars;
  const labelW = Math.max(...bars.map((b) => ctx.measureText(b.label).width)) + 12;
  const max = spec.max ?? Math.max(...bars.map((b) => b.value));
  const rowH = Math.min(40, (height - 8) / bars.length);
  const x0 = Math.min(labelW, width * 0.45), room = Math.max(10, width - x0 - 8);
  const boxes = bars.map((b, i) => {
    const y = 4 + i * rowH, w = Math.max(2, (b.value / (max || 1)) * room * 0.62);
    ctx.fillStyle = colors.fg;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    ctx.fillText(b.label, x0 - 8, y + rowH / 2, x0 - 10);
    ctx.fillStyle = legible(b.color, colors);
    ctx.fillRect(x0, y + rowH * 0.2, w, rowH * 0.6);
    if (spec.cursor && spec.cursor.i === i) {
      for (const [style, lw] of [['rgba(0,0,0,0.85)', 3], ['#ffffff', 1]]) {
        ctx.strokeStyle = style;
        ctx.lineWidth = lw;
        ctx.strokeRect(x0 - 1, y + rowH * 0.2 - 1, w + 2, rowH * 0.6 + 2);
      }
    }
    ctx.fillStyle = colors.fg;
    ctx.textAlign = 'left';
    ctx.fillText(b.text, x0 + w + 6, y + rowH / 2, Math.max(20, width - x0 - w - 10));
    return { y, h: rowH };
  });
  return {
    hit(cx, cy) {
      const i = boxes.findIndex((b) => cy >= b.y && cy < b.y + b.h);
      return i >= 0 && cx >= 0 && cx < width ? { i } : null;
    },
  };
}

/**
 * A small matrix with row and column labels and each value printed in its cell.
 * spec: { values (row-major, printed), shade (colours, default values), rows, cols, rowLabels, colLabels,
 *         lo, hi, lut, digits, dark(t) (white text),
 *         cursor: { x: column, y: row } }
 */
function drawMatrix(ctx, width, height, spec, colors) {
  const { values, rows, cols, lo, hi, lut } = spec;
  ctx.font = FONT;
  const labelW = Math.max(...spec.rowLabels.map((l) => ctx.measureText(l).width)) + 10;
  const size = Math.max(8, Math.min((width - labelW - 12) / cols, (height - 24) / rows));
  const x0 = labelW + 4, y0 = 4;
  const boxes = [];
  ctx.textBaseline = 'middle';
  for (let r = 0; r < rows; r++) {
    ctx.textAlign = 'right';
    ctx.fillStyle = colors.fg;
    ctx.fillText(spec.rowLabels[r], x0 - 6, y0 + (r + 0.5) * size);
    for (let c = 0; c < cols; c++) {
      const v = values[r * cols + c];
      const t = ((spec.shade ? spec.shade[r * cols + c] : v) - lo) / (hi - lo || 1);
      ctx.fillStyle = lutColor(lut, t);
      ctx.fillRect(x0 + c * size, y0 + r * size, size - 1, size - 1);
      if (size >= 34) {
        ctx.fillStyle = spec.dark?.(t) ? '#fff' : '#000';
        ctx.textAlign = 'center';
        ctx.font = size >= 44 ? FONT : SMALL;
        ctx.fillText(v.toFixed(spec.digits ?? 2), x0 + (c + 0.5) * size, y0 + (r + 0.5) * size, size - 4);
        ctx.font = FONT;
      }
      if (spec.cursor && spec.cursor.y === r && spec.cursor.x === c) {
        for (const [style, w] of [['#000', 3], ['#fff', 1]]) {
          ctx.strokeStyle = style;
          ctx.lineWidth = w;
          ctx.strokeRect(x0 + c * size + 1, y0 + r * size + 1, size - 3, size - 3);
        }
      }
      boxes.push({ r, c, x: x0 + c * size, y: y0 + r * size });
    }
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  ctx.fillStyle = colors.muted;
  for (let c = 0; c < cols; c++) ctx.fillText(spec.colLabels[c], x0 + (c + 0.5) * size, y0 + rows * size + 3, size);
  return {
    hit(cx, cy) {
      const b = boxes.find((q) => cx >= q.x && cx < q.x + size && cy >= q.y && cy < q.y + size);
      return b ? { x: b.c, y: b.r } : null;
    },
  };
}

// A vector's label beyond its tip (x, y), kept inside the canvas and off the labels placed before
// it: moved a line at a time, away from the centre first, while it would overlap one.
function tipLabel(ctx, text, x, y, { cx, cy, width, room }, placed) {
  const len = Math.hypot(x - cx, y - cy) || 1, w = ctx.measureText(text).width;
  let lx = x + ((x - cx) / len) * 10;
  if (x < cx) lx -= w;
  lx = Math.max(2, Math.min(width - 2 - w, lx));
  const y0 = Math.max(8, Math.min(room - 8, y + ((y - cy) / len) * 10)), away = y0 >= cy ? 16 : -16;
  const inside = (ly) => ly >= 8 && ly <= room - 8;
  const free = (ly) => !placed.some((b) => lx < b.x + b.w && b.x < lx + w && Math.abs(ly - b.y) < 15);
  const tries = placed.flatMap((_, k) => [y0 + (k + 1) * away, y0 - (k + 1) * away]);
  const ly = [y0, ...tries].find((t) => inside(t) && free(t)) ?? y0;
  placed.push({ x: lx, y: ly, w });
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  ctx.fillText(text, lx, ly);
}

/**
 * Vectors from the centre of a circle. spec: { vectors: [{ x, y, color, label, dash, hollow, width }],
 * arcs: [{ from, to, color, label }] (angles in radians), radius (data units at the rim), caption }
 */
function drawCircle(ctx, width, height, spec, colors) {
  ctx.font = FONT;
  const caption = spec.caption ? wrapText(ctx, spec.caption, width - 8) : [];
  const room = height - 16 * caption.length;
  const cx = width / 2, cy = room / 2;
  const r = Math.max(10, Math.min(width, room) / 2 - 28);
  const unit = r / (spec.radius ?? 1);
  ctx.strokeStyle = colors.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(cx - r - 10, cy);
  ctx.lineTo(cx + r + 10, cy);
  ctx.moveTo(cx, cy - r - 10);
  ctx.lineTo(cx, cy + r + 10);
  ctx.stroke();
  ctx.strokeStyle = colors.muted;
  ctx.beginPath(); ctx.arc(cx, cy, r, 0, 2 * Math.PI); ctx.stroke();
  for (const a of spec.arcs ?? []) {
    ctx.strokeStyle = legible(a.color, colors);
    ctx.lineWidth = 2;
    ctx.beginPath(); ctx.arc(cx, cy, a.radius * unit, -a.from, -a.to, a.to > a.from); ctx.stroke();
  }
  const placed = [];  // the labels drawn so far: { x, y, w }
  for (const v of spec.vectors) {
    const x = cx + v.x * unit, y = cy - v.y * unit;
    const ink = legible(v.color, colors);
    ctx.strokeStyle = ink;
    ctx.fillStyle = ink;
    ctx.lineWidth = v.width ?? 2.5;
    ctx.setLineDash(v.dash ?? []);
    ctx.beginPath(); ctx.moveTo(cx, cy); ctx.lineTo(x, y); ctx.stroke();
    ctx.setLineDash([]);
    ctx.beginPath();
    ctx.arc(x, y, v.hollow ? 7 : 4, 0, 2 * Math.PI);
    if (v.hollow) { ctx.lineWidth = 2; ctx.stroke(); } else ctx.fill();
    if (v.label) {
      ctx.fillStyle = legible(v.color, colors, 4.5);
      tipLabel(ctx, v.label, x, y, { cx, cy, width, room }, placed);
    }
  }
  ctx.fillStyle = colors.muted;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'bottom';
  caption.forEach((line, i) => ctx.fillText(line, width / 2, height - 2 - 16 * (caption.length - 1 - i)));
  return { hit: () => ({ i: 0 }) };
}
