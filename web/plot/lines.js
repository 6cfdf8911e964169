// Line charts: series on one or two y axes, horizontal and vertical reference lines with labels
// that move out of each other's way, a legend above the plot, min–max decimation for long series,
// shaded bands (a range per point, e.g. min–max over seeds) under their series.
import { legible } from './legible.js';
import { drawMarker } from './markers.js';
import { FONT, axisScale, drawAxes, flat, frame, logTicks, niceTicks, tickLabels, wrapText } from './core.js';

/** Line-chart CSV: x and one column per series. */
export function linesCsv(xName, xs, series) {
  const head = [xName, ...series.map((s) => s.label.replace(/,/g, ';'))].join(',');
  return `${head}\n${Array.from(xs, (x, i) => [x, ...series.map((s) => s.y[i])].join(',')).join('\n')}\n`;
}

// A data range with room at both ends (4 % of it; a range that starts at 0 keeps 0), so that the
// highest and lowest points and their markers sit inside the frame, not on it.
function padded([lo, hi], log) {
  if (log) {
    const f = (hi / lo) ** 0.04;
    return [lo / f, hi * f];
  }
  const pad = (hi - lo) * 0.04;
  return [lo === 0 ? 0 : lo - pad, hi + pad];
}

function range(series, log, key) {
  let lo = Infinity, hi = -Infinity;
  for (const s of series) {
    for (const v of s[key]) if (Number.isFinite(v) && (!log || v > 0)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  }
  if (!(lo <= hi)) return log ? [1, 10] : [0, 1];
  // Flat, or flat but for float rounding (NTK's stretch at s = 1: 1 and 1 + 2e-16), is drawn flat.
  if (flat(lo, hi)) return log ? [lo / 2, hi * 2] : [lo - 1, hi + 1];
  return [lo, hi];
}

// The legend's layout above the plot: each label's swatch and text at { x, y, w }, in rows 17 px
// apart, a label's width from measure(label).
function legendLayout(labels, width, measure) {
  const out = [];
  let lx = 8, ly = 10;
  for (const label of labels) {
    const w = Math.min(measure(label) + 30, width - 16);
    if (lx + w > width - 8 && lx > 8) { lx = 8; ly += 17; }
    out.push({ x: lx, y: ly, w });
    lx += w + 10;
  }
  return out;
}

/** How many rows drawLines' legend takes for these labels at this width, from a width per character
 * (DejaVu Sans at the plots' 12 px is about 6.5 px; 7 errs toward a row too many): for a view whose
 * canvas grows with its legend, so its plot keeps its height on a phone. */
export function legendRows(labels, width, charWidth = 7) {
  return new Set(legendLayout(labels, width, (label) => label.length * charWidth).map((p) => p.y)).size;
}

/**
 * spec: { series: [{ label, x, y, color, dash, axis: 1 | 2, step, width }], xLabel, yLabel, y2Label,
 * xLog, yLog, y2Log, xDomain, yDomain, y2Domain, hlines: [{ y, label ('': none), color, side: 'left' | 'right', below (its
 * label under the line: a floor, which the series stay above) }],
 * vlines: [{ x, label, color }], note (a line under the legend), cursor: { i } (an index into
 * series 0's x) | null, xTicks (tick values instead of the automatic ones), texts: [{ x, y, label,
 * color }] (text at a data point; y null: near the top, under the vlines' labels), legend: false
 * (none: the page shows its own) }; a series with `points` also marks each point (with its `marker`:
 * { shape (markers.js), open }, if it has one, else a dot), one with `band:
 * { lo, hi }` (arrays along x) shades lo … hi in its colour.
 */
export function drawLines(ctx, width, height, plainSpec, colors) {
  // Every series, in its legend too, in a colour with 3 : 1 against the background (colormap.js).
  const spec = { ...plainSpec, series: plainSpec.series.map((s) => ({ ...s, color: legible(s.color, colors) })) };
  const hasY2 = spec.series.some((s) => s.axis === 2);
  ctx.font = FONT;
  // The legend goes above the plot: lay it out first to know how many rows it takes.
  const named = spec.legend === false ? [] : spec.series.filter((s) => s.label);
  const legend = legendLayout(named.map((s) => s.label), width, (label) => ctx.measureText(label).width)
    .map((at, k) => ({ s: named[k], ...at }));
  const ly = legend.at(-1)?.y ?? 10;  // the legend's last row (the note goes under it)
  const top = ly + (spec.note ? 30 : 14);
  const y1s = spec.series.filter((s) => s.axis !== 2), y2s = spec.series.filter((s) => s.axis === 2);
  const xd = spec.xDomain ?? range(spec.series, spec.xLog, 'x');
  const bands = y1s.filter((s) => s.band).flatMap((s) => [{ y: s.band.lo }, { y: s.band.hi }]);
  let yd = spec.yDomain ?? range([...y1s, ...bands], spec.yLog, 'y');
  for (const h of spec.hlines ?? []) {
    if (!spec.yDomain && Number.isFinite(h.y) && (!spec.yLog || h.y > 0)) yd = [Math.min(yd[0], h.y), Math.max(yd[1], h.y)];
  }
  if (!spec.yDomain) yd = padded(yd, spec.yLog);
  // A label under its line (a floor's) needs a label's height of room below the lowest line.
  if (!spec.yDomain && !spec.yLog && (spec.hlines ?? []).some((h) => h.below)) {
    const lowest = Math.min(...spec.hlines.filter((h) => h.below).map((h) => h.y));
    const perPixel = (yd[1] - yd[0]) / Math.max(40, height - top - 46);
    yd = [Math.min(yd[0], lowest - 18 * perPixel), yd[1]];
  }
  const guessTicks = spec.yLog ? logTicks(yd[0], yd[1])
    : niceTicks(yd[0], yd[1], Math.max(2, Math.floor((height - top - 46) / 40)));
  const plot = frame(ctx, width, height, { yLabels: tickLabels(guessTicks), right: hasY2 ? 62 : 14, top });
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  const xScale = axisScale({ log: spec.xLog }, xd[0], xd[1], { start: plot.x, size: plot.w }, false);
  if (spec.xTicks) xScale.ticks = spec.xTicks;
  const yScale = axisScale({ log: spec.yLog }, yd[0], yd[1], { start: plot.y, size: plot.h }, true);
  const y2d = hasY2 ? (spec.y2Domain ?? range(y2s, spec.y2Log, 'y')) : null;
  const y2Scale = hasY2 ? axisScale({ log: spec.y2Log }, y2d[0], y2d[1], { start: plot.y, size: plot.h }, true) : null;
  drawAxes(ctx, plot, colors, { xLabel: spec.xLabel, yLabel: spec.yLabel, xScale, yScale, y2Label: spec.y2Label, y2Scale, height,
    grid: true });

  ctx.save();
  ctx.beginPath();
  ctx.rect(plot.x, plot.y, plot.w, plot.h);
  ctx.clip();
  const refLabels = drawRefLines(ctx, plot, spec, xScale, yScale, colors);
  for (const s of spec.series) if (s.band && s.axis !== 2) drawBand(ctx, s, xScale, yScale);
  for (const s of spec.series) {
    const right = s.axis === 2;
    drawSeries(ctx, plot, s, xScale, right ? y2Scale : yScale, right ? spec.y2Log : spec.yLog, spec.xLog);
  }
  const labelBoxes = refLabels();  // over the series: a curve never crosses a label, and each label has its backing
  drawTexts(ctx, plot, spec.texts ?? [], xScale, yScale, colors);
  if (spec.cursor && spec.series.length) {
    const s0 = spec.series[0];
    const x = xScale.to(s0.x[spec.cursor.i]);
    for (const [style, w] of [['rgba(0,0,0,0.6)', 3], [colors.mark, 1.5]]) {
      ctx.strokeStyle = style;
      ctx.lineWidth = w;
      ctx.beginPath(); ctx.moveTo(x, plot.y); ctx.lineTo(x, plot.y + plot.h); ctx.stroke();
    }
  }
  ctx.restore();

  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'left';
  for (const { s, x, y, w } of legend) {
    ctx.strokeStyle = s.color;
    ctx.lineWidth = 2;
    ctx.setLineDash(s.dash ?? []);
    ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x + 20, y); ctx.stroke();
    ctx.setLineDash([]);
    if (s.marker) {  // the series' marker on its swatch, as the page's own legend shows it
      ctx.fillStyle = s.color;
      ctx.lineWidth = 1.5;
      drawMarker(ctx, s.marker, x + 10, y, 4);
    }
    ctx.fillStyle = colors.fg;
    ctx.fillText(s.label, x + 24, y, w - 26);
  }
  if (spec.note) {
    ctx.fillStyle = colors.muted;
    ctx.fillText(spec.note, 8, ly + 16, width - 16);
  }
  const xs = spec.series[0]?.x ?? [];
  return {
    plot,
    // Where the reference lines' labels sit, and a data point's place: what a label may not cover.
    labels: labelBoxes,
    toPixel: (x, y, axis = 1) => [xScale.to(x), (axis === 2 ? y2Scale : yScale).to(y)],
    hit(cx, cy) {
      if (cx < plot.x || cx > plot.x + plot.w || cy < plot.y || cy > plot.y + plot.h || xs.length === 0) return null;
      const target = xScale.from(cx);
      let best = 0;
      for (let i = 1; i < xs.length; i++) if (Math.abs(xs[i] - target) < Math.abs(xs[best] - target)) best = i;
      return { i: best };
    },
  };
}

// A label on a backing of the background colour, so that the lines it crosses do not hide it.
// Returns the backing's box { text, left, top, w, h }.
function backedText(ctx, text, x, y, colors) {
  const w = ctx.measureText(text).width;
  const left = ctx.textAlign === 'right' ? x - w : ctx.textAlign === 'center' ? x - w / 2 : x;
  const top = ctx.textBaseline === 'bottom' ? y - 14 : ctx.textBaseline === 'top' ? y - 1 : y - 8;
  const fill = ctx.fillStyle;
  ctx.globalAlpha = 0.85;
  ctx.fillStyle = colors.bg;
  ctx.fillRect(left - 2, top, w + 4, 15);
  ctx.globalAlpha = 1;
  ctx.fillStyle = fill;
  ctx.fillText(text, x, y);
  return { text, left: left - 2, top, w: w + 4, h: 15 };
}

// Reference lines; each label sits at the right end of its line (or the side it asks for) unless
// another label is there, then at the other end, then stacked below the one in the way. Draws the
// lines and returns the function that draws the labels (with backings) once the series are on,
// which returns their boxes.
function drawRefLines(ctx, plot, spec, xScale, yScale, colors) {
  ctx.font = FONT;
  const taken = { right: [], left: [] }, labels = [];
  const hl = (spec.hlines ?? []).map((h) => ({ ...h, py: yScale.to(h.y) })).sort((a, b) => a.py - b.py);
  for (const h of hl) {
    ctx.strokeStyle = legible(h.color ?? colors.muted, colors);
    ctx.setLineDash([6, 4]);
    ctx.beginPath(); ctx.moveTo(plot.x, h.py); ctx.lineTo(plot.x + plot.w, h.py); ctx.stroke();
    ctx.setLineDash([]);
    if (!h.label) continue;  // a line its plot's note names
    let side = h.side ?? 'right';
    let y = h.below ? Math.min(h.py + 14, plot.y + plot.h - 1) : Math.max(plot.y + 14, h.py - 2);
    // A label wider than the plot (a phone's) is wrapped into rows, 14 px apart.
    const rows = wrapText(ctx, h.label, plot.w - 8), n = rows.length;
    const w = Math.max(...rows.map((r) => ctx.measureText(r).width)) + 8;
    // A label clashes with one on its side whose rows it would overlap, or with one on the other
    // side that it would run into (two long labels do not fit side by side on a narrow plot).
    const over = (t, yy) => yy - 14 < t.y + 14 * (t.n - 1) && t.y - 14 < yy + 14 * (n - 1);
    const clash = (s, yy) => taken[s].some((t) => over(t, yy))
      || taken[s === 'right' ? 'left' : 'right'].some((t) => over(t, yy) && t.w + w + 8 > plot.w);
    const other = side === 'right' ? 'left' : 'right';
    if (clash(side, y) && !clash(other, y)) side = other;
    while (clash(side, y)) y += 14;
    y = Math.min(y, plot.y + plot.h - 1 - 14 * (n - 1));  // every row inside the plot
    taken[side].push({ y, w, n });
    labels.push(() => {
      ctx.fillStyle = legible(h.color ?? colors.muted, colors, 4.5);
      ctx.textAlign = side;
      ctx.textBaseline = 'bottom';
      return rows.map((r, k) => backedText(ctx, r, side === 'right' ? plot.x + plot.w - 4 : plot.x + 4, y + 14 * k, colors));
    });
  }
  for (const v of spec.vlines ?? []) {
    const x = xScale.to(v.x);
    ctx.strokeStyle = legible(v.color ?? colors.muted, colors);
    ctx.setLineDash([3, 3]);
    ctx.beginPath(); ctx.moveTo(x, plot.y); ctx.lineTo(x, plot.y + plot.h); ctx.stroke();
    ctx.setLineDash([]);
    // Right of the line, or left of it when the label would run past the plot.
    const right = x + 3 + ctx.measureText(v.label).width <= plot.x + plot.w - 2;
    labels.push(() => {
      ctx.fillStyle = legible(v.color ?? colors.muted, colors, 4.5);
      ctx.textAlign = right ? 'left' : 'right';
      ctx.textBaseline = 'top';
      return backedText(ctx, v.label, right ? x + 3 : x - 3, plot.y + 3, colors);
    });
  }
  return () => {
    ctx.font = FONT;
    return labels.flatMap((draw) => draw());
  };
}

// Text at data coordinates, kept inside the plot (y null: near its top, below the vlines' labels).
function drawTexts(ctx, plot, texts, xScale, yScale, colors) {
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  for (const t of texts) {
    const w = ctx.measureText(t.label).width;
    const px = Math.max(plot.x + 2, Math.min(plot.x + plot.w - w - 2, xScale.to(t.x) - (t.center ? w / 2 : 0)));
    const py = t.y === null || t.y === undefined ? plot.y + 26
      : Math.max(plot.y + 8, Math.min(plot.y + plot.h - 8, yScale.to(t.y)));
    // A backing of the background colour keeps the words legible over the lines they cross.
    ctx.globalAlpha = 0.85;
    ctx.fillStyle = colors.bg;
    ctx.fillRect(px - 2, py - 8, w + 4, 16);
    ctx.globalAlpha = 1;
    ctx.fillStyle = legible(t.color ?? colors.fg, colors, 4.5);
    ctx.textAlign = 'left';
    ctx.fillText(t.label, px, py);
  }
}

// The shaded range lo … hi of a series, one polygon per run of finite points.
function drawBand(ctx, s, xScale, ys) {
  ctx.fillStyle = s.color;
  ctx.globalAlpha = 0.2;
  const ok = (i) => Number.isFinite(s.band.lo[i]) && Number.isFinite(s.band.hi[i]);
  for (let i = 0; i < s.x.length; i++) {
    if (!ok(i)) continue;
    let j = i;
    while (j + 1 < s.x.length && ok(j + 1)) j++;
    ctx.beginPath();
    for (let k = i; k <= j; k++) ctx.lineTo(xScale.to(s.x[k]), ys.to(s.band.hi[k]));
    for (let k = j; k >= i; k--) ctx.lineTo(xScale.to(s.x[k]), ys.to(s.band.lo[k]));
    ctx.closePath();
    ctx.fill();
    i = j;
  }
  ctx.globalAlpha = 1;
}

// A line of many segments, stroked in pieces of PIECE segments, each from where the last ended and
// its dashes at their phase; a point within a pixel of the last one drawn (both ways) is left out,
// unless it ends the line. The browser rasterizes a canvas's drawing when it commits the frame, and a
// wide stroke of thousands of segments is slow there: the lab-training view's 16 curves of 2000 steps
// cost 26–56 ms drawn as one stroke each, 12–26 ms this way (tests/browser/lines.test.mjs; the
// measurement in docs/explorer.md).
const PIECE = 48;
function piecewise(ctx) {
  let n = 0, run = 0, x0 = 0, y0 = 0;  // run: the length of the subpath so far (where its dashes are)
  let left = null;                     // the point left out last, drawn if the line ends on it
  const end = () => { if (left) ctx.lineTo(left[0], left[1]); left = null; };
  return {
    moveTo(x, y) {  // a new subpath: its dashes start at their beginning
      end();
      ctx.stroke();
      ctx.beginPath();
      ctx.lineDashOffset = 0;
      ctx.moveTo(x, y);
      run = 0; x0 = x; y0 = y;
    },
    lineTo(x, y) {
      if (Math.abs(x - x0) < 1 && Math.abs(y - y0) < 1) { left = [x, y]; return; }
      left = null;
      ctx.lineTo(x, y);
      run += Math.hypot(x - x0, y - y0);
      x0 = x; y0 = y;
      if (++n % PIECE) return;
      ctx.stroke();
      ctx.beginPath();
      ctx.lineDashOffset = run;
      ctx.moveTo(x, y);
    },
    end,
  };
}

// Many more points than pixels (and not steps): one vertical min–max stroke per pixel column,
// which keeps the envelope of fast oscillations that plain sampling would alias away.
function drawSeries(ctx, plot, s, xScale, ys, log, xLog) {
  ctx.strokeStyle = s.color;
  ctx.lineWidth = s.width ?? 1.6;
  ctx.setLineDash(s.dash ?? []);
  ctx.beginPath();
  const { moveTo, lineTo, end } = piecewise(ctx);
  let pen = false, prevY = 0;
  const decimate = !s.step && s.x.length > 2 * plot.w;
  let column = -1, lo = 0, hi = 0;
  const flush = () => {
    if (column < 0) return;
    if (!pen) moveTo(column, lo); else lineTo(column, lo);
    lineTo(column, hi);
    pen = true;
  };
  for (let i = 0; i < s.x.length; i++) {
    const xv = s.x[i], yv = s.y[i];
    if (!Number.isFinite(yv) || (log && yv <= 0) || (xLog && xv <= 0)) {
      if (decimate) { flush(); column = -1; }
      pen = false;
      continue;
    }
    const px = xScale.to(xv), py = ys.to(yv);
    if (decimate) {
      const col = Math.round(px);
      if (col !== column) { flush(); column = col; lo = hi = py; } else { lo = Math.min(lo, py); hi = Math.max(hi, py); }
      continue;
    }
    // Inside a flat run of a step series the line goes straight on: only the run's last point is drawn.
    if (pen && s.step && yv === s.y[i - 1] && i + 1 < s.x.length && s.y[i + 1] === yv) continue;
    if (!pen) moveTo(px, py);
    else if (s.step) { lineTo(px, prevY); lineTo(px, py); }
    else lineTo(px, py);
    pen = true;
    prevY = py;
  }
  if (decimate) flush();
  end();
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.lineDashOffset = 0;
  if (!s.points) return;
  // A dot, or the series' own marker (a shape, filled or open) a little larger, so its shape shows.
  const marker = s.marker ?? { shape: 'circle', open: false }, r = s.marker ? 4 : 3;
  ctx.fillStyle = s.color;
  ctx.lineWidth = 1.5;
  for (let i = 0; i < s.x.length; i++) {
    const xv = s.x[i], yv = s.y[i];
    if (!Number.isFinite(yv) || (log && yv <= 0) || (xLog && xv <= 0)) continue;
    drawMarker(ctx, marker, xScale.to(xv), ys.to(yv), r);
  }
}
