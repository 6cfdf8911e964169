// What every plot shares: ticks and their labels, theme colours, the plot frame, axes with titles
// that never collide with tick labels, and the message drawn when a view refuses its settings.
// Every function draws in CSS pixels on a context already scaled for the pixel ratio.
export const FONT = '12px "DejaVu Sans", sans-serif';
export const SMALL = '11px "DejaVu Sans", sans-serif';

/** lo … hi too narrow to tell apart on an axis (within 1e-9 of its ends, float rounding and then
 * some; ticks are printed to 12 digits at most): drawn flat, with one tick. */
export const flat = (lo, hi) => !(hi - lo > 1e-9 * Math.max(Math.abs(lo), Math.abs(hi)));

/** Round tick values (1, 2, 5 × 10^k) covering [lo, hi], about `count` of them; no -3e-17. */
export function niceTicks(lo, hi, count = 6) {
  const span = hi - lo;
  // A span within float rounding of its ends (1 … 1 + 2e-16) has no round steps: a step that
  // small would be counted in k that no longer change by 1 (past 2^53), for ever.
  if (flat(lo, hi)) return [lo];
  const want = Math.max(2, count);
  const mag = 10 ** Math.floor(Math.log10(span / want));
  // The round step whose tick count comes closest to the wish (never fewer than two ticks).
  let step = 0, best = Infinity;
  for (const m of [0.5, 1, 2, 5, 10, 20]) {
    const s = m * mag;
    const n = Math.floor(hi / s + 1e-9) - Math.ceil(lo / s - 1e-9) + 1;
    const miss = n < 2 ? Infinity : Math.abs(n - want) + (n > want + 1 ? 0.5 : 0);
    if (miss < best) { best = miss; step = s; }
  }
  const ticks = [];
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++) {
    const v = k * step;
    ticks.push(k === 0 ? 0 : +v.toPrecision(12));
  }
  return ticks;
}

/** Powers of ten in [lo, hi] (log axes); the two ends when the span holds fewer than two. */
export function logTicks(lo, hi) {
  const ticks = [];
  for (let e = Math.ceil(Math.log10(lo) - 1e-9); e <= Math.floor(Math.log10(hi) + 1e-9); e++) ticks.push(10 ** e);
  return ticks.length >= 2 ? ticks : [lo, hi];
}

export function formatTick(v, digits = 0) {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(digits).replace('e+', 'e');
  return String(+v.toPrecision(6));
}

/** Labels for a set of ticks, with as many digits as it takes for no two to read the same. */
export function tickLabels(ticks) {
  for (let digits = 0; digits < 6; digits++) {
    const labels = ticks.map((t) => formatTick(t, digits));
    if (new Set(labels).size === labels.length) return labels;
  }
  return ticks.map((t) => String(t));
}

export function themeColors(element) {
  const css = getComputedStyle(element);
  const get = (name, dflt) => css.getPropertyValue(name).trim() || dflt;
  return { fg: get('--fg', '#000'), muted: get('--muted', '#666'), bg: get('--bg', '#fff'), grid: get('--grid', '#ddd'),
    mark: get('--mark', '#c00') };
}

/** Width of the widest label, in the current font. */
function widest(ctx, labels) {
  let w = 0;
  for (const l of labels) w = Math.max(w, ctx.measureText(l).width);
  return w;
}

/** Plot area: room on the left for the y tick labels (measured) and the y title. */
export function frame(ctx, width, height, { yLabels = ['0.00'], right = 14, top = 14, bottom = 46 } = {}) {
  ctx.font = FONT;
  const left = Math.ceil(24 + widest(ctx, yLabels) + 8);
  return { x: left, y: top, w: Math.max(10, width - left - right), h: Math.max(10, height - top - bottom) };
}

/** A linear or log scale from data to pixels (flip: y grows upwards). */
export function axisScale({ log = false }, lo, hi, pixels, flip, tickCount) {
  const a = log ? Math.log10(lo) : lo, b = log ? Math.log10(hi) : hi;
  const to = (v) => {
    const t = ((log ? Math.log10(v) : v) - a) / (b - a || 1);
    return flip ? pixels.start + pixels.size * (1 - t) : pixels.start + pixels.size * t;
  };
  const from = (px) => {
    const t = flip ? 1 - (px - pixels.start) / pixels.size : (px - pixels.start) / pixels.size;
    const v = a + t * (b - a);
    return log ? 10 ** v : v;
  };
  const count = tickCount ?? Math.max(2, Math.floor(pixels.size / (flip ? 40 : 90)));
  return { to, from, ticks: log ? logTicks(lo, hi) : niceTicks(lo, hi, count) };
}

// A grid line in the grid colour; the axes' colour (muted) is restored after it.
function gridLine(ctx, colors, x0, y0, x1, y1) {
  ctx.strokeStyle = colors.grid;
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.lineTo(x1, y1);
  ctx.stroke();
  ctx.strokeStyle = colors.muted;
}

/**
 * Axes around `plot`: ticks and labels (a label that would overlap the previous one is skipped),
 * titles outside the tick labels, an optional right axis.
 */
export function drawAxes(ctx, plot, colors, { xLabel, yLabel, xScale, yScale, y2Label, y2Scale, height, grid }) {
  ctx.font = FONT;
  ctx.lineWidth = 1;
  ctx.strokeStyle = colors.muted;
  ctx.fillStyle = colors.fg;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  const inside = (p, start, size) => p >= start - 0.5 && p <= start + size + 0.5;
  const xt = xScale.ticks.filter((t) => inside(xScale.to(t), plot.x, plot.w));
  const xl = xScale.labels ? xt.map((t) => xScale.labels[t]) : tickLabels(xt);
  let lastRight = -Infinity;
  xt.forEach((t, k) => {
    const x = xScale.to(t);
    if (grid) gridLine(ctx, colors, x, plot.y, x, plot.y + plot.h);
    ctx.beginPath(); ctx.moveTo(x, plot.y + plot.h); ctx.lineTo(x, plot.y + plot.h + 5); ctx.stroke();
    const w = ctx.measureText(xl[k]).width;
    if (x - w / 2 < lastRight + 6) return;
    ctx.fillText(xl[k], x, plot.y + plot.h + 7);
    lastRight = x + w / 2;
  });
  ctx.fillText(xLabel, plot.x + plot.w / 2, Math.max(plot.y + plot.h + 24, height - 18), Math.max(40, plot.w + plot.x - 4));
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  const yt = yScale.ticks.filter((t) => inside(yScale.to(t), plot.y, plot.h));
  const yl = tickLabels(yt);
  let lastY = Infinity;
  yt.forEach((t, k) => {
    const y = yScale.to(t);
    if (grid) gridLine(ctx, colors, plot.x, y, plot.x + plot.w, y);
    ctx.beginPath(); ctx.moveTo(plot.x - 5, y); ctx.lineTo(plot.x, y); ctx.stroke();
    if (Math.abs(lastY - y) < 14) return;
    ctx.fillText(yl[k], plot.x - 7, y);
    lastY = y;
  });
  ctx.save();
  ctx.translate(12, plot.y + plot.h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = 'center';
  ctx.fillText(yLabel, 0, 0, plot.h);
  ctx.restore();
  if (y2Scale) {
    ctx.textAlign = 'left';
    const y2t = y2Scale.ticks.filter((t) => inside(y2Scale.to(t), plot.y, plot.h));
    const y2l = tickLabels(y2t);
    let last2 = Infinity;
    y2t.forEach((t, k) => {
      const y = y2Scale.to(t);
      ctx.beginPath(); ctx.moveTo(plot.x + plot.w, y); ctx.lineTo(plot.x + plot.w + 5, y); ctx.stroke();
      if (Math.abs(last2 - y) < 14) return;
      ctx.fillText(y2l[k], plot.x + plot.w + 7, y);
      last2 = y;
    });
    ctx.save();
    ctx.translate(plot.x + plot.w + 52, plot.y + plot.h / 2);
    ctx.rotate(Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.fillText(y2Label, 0, 0, plot.h);
    ctx.restore();
  }
  ctx.strokeStyle = colors.muted;
  ctx.strokeRect(plot.x - 0.5, plot.y - 0.5, plot.w + 1, plot.h + 1);
}

/** Text wrapped into lines no wider than `maxWidth` (current font). */
export function wrapText(ctx, text, maxWidth) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (ctx.measureText(next).width > maxWidth && line) { lines.push(line); line = word; } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

/** A view that refuses its settings draws the rule instead of a plot. */
export function drawMessage(ctx, width, height, text, colors) {
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  ctx.font = FONT;
  ctx.fillStyle = colors.fg;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  const lines = wrapText(ctx, text, width - 40);
  lines.forEach((l, i) => ctx.fillText(l, width / 2, height / 2 + (i - (lines.length - 1) / 2) * 18));
  return { hit: () => null };
}
