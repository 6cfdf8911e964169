// Canvas plots for the explorer: heatmaps (ImageData, one pixel per cell, scaled without
// smoothing) and line charts, with one shared path for axes, ticks, legends and the cursor, so
// that hover, the keyboard cursor and PNG export (redrawn at 1x or 2x) behave the same everywhere.
// Every function draws in CSS pixels on a context already scaled for the pixel ratio.
const FONT = '12px "DejaVu Sans", sans-serif';

// A LUT ([r, g, b] × 256) as opaque RGBA words for a Uint32Array view of ImageData (little-endian).
const palettes = new WeakMap();
function paletteOf(lut) {
  let p = palettes.get(lut);
  if (!p) {
    p = new Uint32Array(256);
    for (let k = 0; k < 256; k++) p[k] = (0xff << 24) | (lut[k * 3 + 2] << 16) | (lut[k * 3 + 1] << 8) | lut[k * 3];
    palettes.set(lut, p);
  }
  return p;
}

// ImageData reused while the size stays the same (a drag redraws the same size many times).
let lastImage = null;
function scratchImage(w, h) {
  if (!lastImage || lastImage.width !== w || lastImage.height !== h) lastImage = new ImageData(w, h);
  return lastImage;
}

// Offscreen canvases reused across draws, one per purpose.
const scratch = new Map();
function scratchCanvas(w, h, key = 'image') {
  let c = scratch.get(key);
  if (!c || c.width < w || c.height < h) {
    c = new OffscreenCanvas(Math.max(w, c?.width ?? 0), Math.max(h, c?.height ?? 0));
    scratch.set(key, c);
  }
  return c;
}

/** Round tick values (1, 2, 5 × 10^k) covering [lo, hi], about `count` of them. */
export function niceTicks(lo, hi, count = 6) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(+v.toPrecision(12));
  return ticks;
}

/** Powers of ten in [lo, hi] (log axes); at least the two ends when the span is short. */
function logTicks(lo, hi) {
  const ticks = [];
  for (let e = Math.ceil(Math.log10(lo) - 1e-9); e <= Math.floor(Math.log10(hi) + 1e-9); e++) ticks.push(10 ** e);
  return ticks.length >= 2 ? ticks : [lo, hi];
}

export function formatTick(v) {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(0).replace('e+', 'e');
  return String(+v.toPrecision(6));
}

export function themeColors(element) {
  const css = getComputedStyle(element);
  const get = (name, dflt) => css.getPropertyValue(name).trim() || dflt;
  return { fg: get('--fg', '#000'), muted: get('--muted', '#666'), bg: get('--bg', '#fff'), grid: get('--grid', '#ddd'), mark: get('--mark', '#c00') };
}

/** Plot area inside a canvas of CSS size (width, height), leaving room for axes and a legend. */
function frame(width, height, legendWidth, rightAxis, top = 14) {
  const m = { left: 62, right: legendWidth + (rightAxis ? 58 : 14), top, bottom: 46 };
  return { x: m.left, y: m.top, w: Math.max(10, width - m.left - m.right), h: Math.max(10, height - m.top - m.bottom) };
}

function axisScale(axis, lo, hi, pixels, flip) {
  const log = axis.log === true;
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
  return { to, from, ticks: log ? logTicks(lo, hi) : niceTicks(lo, hi, Math.max(2, Math.floor(pixels.size / (flip ? 45 : 80)))) };
}

function drawAxes(ctx, plot, colors, { xLabel, yLabel, xScale, yScale, y2Label, y2Scale, width, height, grid }) {
  ctx.font = FONT;
  ctx.lineWidth = 1;
  ctx.strokeStyle = colors.muted;
  ctx.fillStyle = colors.fg;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const t of xScale.ticks) {
    const x = xScale.to(t);
    if (x < plot.x - 0.5 || x > plot.x + plot.w + 0.5) continue;
    if (grid) { ctx.strokeStyle = colors.grid; ctx.beginPath(); ctx.moveTo(x, plot.y); ctx.lineTo(x, plot.y + plot.h); ctx.stroke(); ctx.strokeStyle = colors.muted; }
    ctx.beginPath(); ctx.moveTo(x, plot.y + plot.h); ctx.lineTo(x, plot.y + plot.h + 5); ctx.stroke();
    ctx.fillText(formatTick(t), x, plot.y + plot.h + 7);
  }
  ctx.fillText(xLabel, plot.x + plot.w / 2, height - 16);
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const t of yScale.ticks) {
    const y = yScale.to(t);
    if (y < plot.y - 0.5 || y > plot.y + plot.h + 0.5) continue;
    if (grid) { ctx.strokeStyle = colors.grid; ctx.beginPath(); ctx.moveTo(plot.x, y); ctx.lineTo(plot.x + plot.w, y); ctx.stroke(); ctx.strokeStyle = colors.muted; }
    ctx.beginPath(); ctx.moveTo(plot.x - 5, y); ctx.lineTo(plot.x, y); ctx.stroke();
    ctx.fillText(formatTick(t), plot.x - 7, y);
  }
  ctx.save();
  ctx.translate(13, plot.y + plot.h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = 'center';
  ctx.fillText(yLabel, 0, 0);
  ctx.restore();
  if (y2Scale) {
    ctx.textAlign = 'left';
    for (const t of y2Scale.ticks) {
      const y = y2Scale.to(t);
      if (y < plot.y - 0.5 || y > plot.y + plot.h + 0.5) continue;
      ctx.beginPath(); ctx.moveTo(plot.x + plot.w, y); ctx.lineTo(plot.x + plot.w + 5, y); ctx.stroke();
      ctx.fillText(formatTick(t), plot.x + plot.w + 7, y);
    }
    ctx.save();
    ctx.translate(plot.x + plot.w + 50, plot.y + plot.h / 2);
    ctx.rotate(Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.fillText(y2Label, 0, 0);
    ctx.restore();
  }
  ctx.strokeStyle = colors.muted;
  ctx.strokeRect(plot.x - 0.5, plot.y - 0.5, plot.w + 1, plot.h + 1);
}

/**
 * Heatmap of values[x * ny + y] (x-major), x along the horizontal axis, y upwards.
 * spec: { values, nx, ny, xDomain: [first, last] (labels of cells 0 and nx-1), yDomain, lo, hi,
 *         lut, xLabel, yLabel, legendLabel, cursor: { x, y } | null }
 */
export function drawHeatmap(ctx, width, height, spec, colors) {
  const { values, nx, ny, lo, hi, lut } = spec;
  const plot = frame(width, height, 80, false);
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  // One image pixel per device pixel at most: columns (rows) beyond that are sampled, nearest.
  const dpr = ctx.getTransform().a || 1;
  const iw = Math.min(nx, Math.max(1, Math.ceil(plot.w * dpr))), ih = Math.min(ny, Math.max(1, Math.ceil(plot.h * dpr)));
  const image = scratchImage(iw, ih);
  const px = new Uint32Array(image.data.buffer);
  const palette = paletteOf(lut);
  const scale = 255 / (hi - lo);
  const masked = 0x28808080;  // -Infinity (masked): faint grey, "−∞" in the read-out
  for (let c = 0; c < iw; c++) {
    const x = iw === nx ? c : Math.floor(((c + 0.5) * nx) / iw);
    const column = x * ny;
    for (let r = 0; r < ih; r++) {
      const y = ih === ny ? r : Math.floor(((r + 0.5) * ny) / ih);
      const v = values[column + y];
      const t = (v - lo) * scale;
      px[(ih - 1 - r) * iw + c] = v === -Infinity ? masked : palette[t > 0 ? (t < 255 ? (t + 0.5) | 0 : 255) : 0];
    }
  }
  const off = scratchCanvas(iw, ih);
  off.getContext('2d').putImageData(image, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(off, 0, 0, iw, ih, plot.x, plot.y, plot.w, plot.h);

  // Cell centres: cell c spans [c, c+1) of nx, labelled xDomain[0] + c * step.
  const [x0, x1] = spec.xDomain ?? [0, nx - 1], [y0, y1] = spec.yDomain ?? [0, ny - 1];
  const xStep = nx > 1 ? (x1 - x0) / (nx - 1) : 1, yStep = ny > 1 ? (y1 - y0) / (ny - 1) : 1;
  const xScale = {
    to: (v) => plot.x + (((v - x0) / xStep + 0.5) / nx) * plot.w,
    ticks: niceTicks(x0, x1, Math.max(2, Math.floor(plot.w / 80))),
  };
  const yScale = {
    to: (v) => plot.y + plot.h - (((v - y0) / yStep + 0.5) / ny) * plot.h,
    ticks: niceTicks(y0, y1, Math.max(2, Math.floor(plot.h / 45))),
  };
  drawAxes(ctx, plot, colors, { xLabel: spec.xLabel, yLabel: spec.yLabel, xScale, yScale, width, height });

  // Legend: a vertical colour bar with ticks.
  const bar = { x: plot.x + plot.w + 16, y: plot.y, w: 14, h: plot.h };
  const ramp = new ImageData(1, 256);
  const rampPx = new Uint32Array(ramp.data.buffer);
  for (let i = 0; i < 256; i++) rampPx[i] = palette[255 - i];
  const rampCanvas = scratchCanvas(1, 256, 'ramp');
  rampCanvas.getContext('2d').putImageData(ramp, 0, 0);
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(rampCanvas, 0, 0, 1, 256, bar.x, bar.y, bar.w, bar.h);
  ctx.strokeStyle = colors.muted;
  ctx.strokeRect(bar.x - 0.5, bar.y - 0.5, bar.w + 1, bar.h + 1);
  ctx.fillStyle = colors.fg;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  for (const t of niceTicks(lo, hi, 4)) {
    const y = bar.y + ((hi - t) / (hi - lo)) * bar.h;
    ctx.beginPath(); ctx.moveTo(bar.x + bar.w, y); ctx.lineTo(bar.x + bar.w + 4, y); ctx.stroke();
    ctx.fillText(formatTick(t), bar.x + bar.w + 6, y);
  }
  ctx.save();
  ctx.translate(width - 7, plot.y + plot.h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = 'center';
  ctx.fillText(spec.legendLabel, 0, 0);
  ctx.restore();

  if (spec.cursor) {
    const cw = plot.w / nx, ch = plot.h / ny;
    ctx.strokeStyle = colors.mark;
    ctx.lineWidth = 2;
    ctx.strokeRect(plot.x + spec.cursor.x * cw - 1, plot.y + (ny - 1 - spec.cursor.y) * ch - 1, Math.max(cw, 2) + 2, Math.max(ch, 2) + 2);
  }
  return {
    hit(cx, cy) {
      const fx = (cx - plot.x) / plot.w, fy = (cy - plot.y) / plot.h;
      if (fx < 0 || fx >= 1 || fy < 0 || fy >= 1) return null;
      return { x: Math.floor(fx * nx), y: ny - 1 - Math.floor(fy * ny) };
    },
  };
}

/**
 * Line chart. spec: { series: [{ label, x, y, color, dash, axis: 1 | 2, step }], xLabel, yLabel,
 * y2Label, xLog, yLog, y2Log, xDomain, yDomain, y2Domain, hlines: [{ y, label, color }],
 * vlines: [{ x, label, color }], cursor: { i } (an index into the x of series 0) | null }
 */
export function drawLines(ctx, width, height, spec, colors) {
  const hasY2 = spec.series.some((s) => s.axis === 2);
  // The legend goes above the plot: lay it out first to know how many rows it takes.
  ctx.font = FONT;
  const legend = [];
  let lx = 62, ly = 10;
  for (const s of spec.series) {
    if (!s.label) continue;
    const w = ctx.measureText(s.label).width + 30;
    if (lx + w > width - 8 && lx > 62) { lx = 62; ly += 17; }
    legend.push({ s, x: lx, y: ly });
    lx += w + 8;
  }
  const plot = frame(width, height, 0, hasY2, ly + 14);
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  const range = (axisSeries, log, key) => {
    let lo = Infinity, hi = -Infinity;
    for (const s of axisSeries) {
      for (const v of s[key]) if (Number.isFinite(v) && (!log || v > 0)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    }
    if (!(lo <= hi)) return log ? [1, 10] : [0, 1];
    if (lo === hi) return log ? [lo / 2, hi * 2] : [lo - 1, hi + 1];
    return [lo, hi];
  };
  const y1s = spec.series.filter((s) => s.axis !== 2), y2s = spec.series.filter((s) => s.axis === 2);
  const xd = spec.xDomain ?? range(spec.series, spec.xLog, 'x');
  let yd = spec.yDomain ?? range(y1s, spec.yLog, 'y');
  for (const h of spec.hlines ?? []) if (!spec.yDomain && Number.isFinite(h.y) && (!spec.yLog || h.y > 0)) yd = [Math.min(yd[0], h.y), Math.max(yd[1], h.y)];
  const xScale = axisScale({ log: spec.xLog }, xd[0], xd[1], { start: plot.x, size: plot.w }, false);
  const yScale = axisScale({ log: spec.yLog }, yd[0], yd[1], { start: plot.y, size: plot.h }, true);
  const y2d = hasY2 ? (spec.y2Domain ?? range(y2s, spec.y2Log, 'y')) : null;
  const y2Scale = hasY2 ? axisScale({ log: spec.y2Log }, y2d[0], y2d[1], { start: plot.y, size: plot.h }, true) : null;
  drawAxes(ctx, plot, colors, { xLabel: spec.xLabel, yLabel: spec.yLabel, xScale, yScale, y2Label: spec.y2Label, y2Scale, width, height, grid: true });

  ctx.save();
  ctx.beginPath();
  ctx.rect(plot.x, plot.y, plot.w, plot.h);
  ctx.clip();
  for (const h of spec.hlines ?? []) {
    const y = yScale.to(h.y);
    ctx.strokeStyle = h.color ?? colors.muted;
    ctx.setLineDash([6, 4]);
    ctx.beginPath(); ctx.moveTo(plot.x, y); ctx.lineTo(plot.x + plot.w, y); ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = h.color ?? colors.muted;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'bottom';
    ctx.font = FONT;
    ctx.fillText(h.label, plot.x + plot.w - 4, y - 2);
  }
  for (const v of spec.vlines ?? []) {
    const x = xScale.to(v.x);
    ctx.strokeStyle = v.color ?? colors.muted;
    ctx.setLineDash([3, 3]);
    ctx.beginPath(); ctx.moveTo(x, plot.y); ctx.lineTo(x, plot.y + plot.h); ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = v.color ?? colors.muted;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.font = FONT;
    ctx.fillText(v.label, x + 3, plot.y + 3);
  }
  for (const s of spec.series) {
    const ys = s.axis === 2 ? y2Scale : yScale;
    const log = s.axis === 2 ? spec.y2Log : spec.yLog;
    ctx.strokeStyle = s.color;
    ctx.lineWidth = s.width ?? 1.6;
    ctx.setLineDash(s.dash ?? []);
    ctx.beginPath();
    let pen = false, prevY = 0;
    // Many more points than pixels (and not steps): one vertical min–max stroke per pixel column,
    // which keeps the envelope of fast oscillations that plain sampling would alias away.
    const decimate = !s.step && s.x.length > 2 * plot.w;
    let column = -1, lo = 0, hi = 0;
    const flush = () => {
      if (column < 0) return;
      if (!pen) ctx.moveTo(column, lo); else ctx.lineTo(column, lo);
      ctx.lineTo(column, hi);
      pen = true;
    };
    for (let i = 0; i < s.x.length; i++) {
      const xv = s.x[i], yv = s.y[i];
      if (!Number.isFinite(yv) || (log && yv <= 0) || (spec.xLog && xv <= 0)) { if (decimate) { flush(); column = -1; } pen = false; continue; }
      const px = xScale.to(xv), py = ys.to(yv);
      if (decimate) {
        const col = Math.round(px);
        if (col !== column) { flush(); column = col; lo = hi = py; } else { lo = Math.min(lo, py); hi = Math.max(hi, py); }
        continue;
      }
      if (!pen) ctx.moveTo(px, py);
      else if (s.step) { ctx.lineTo(px, prevY); ctx.lineTo(px, py); }
      else ctx.lineTo(px, py);
      pen = true;
      prevY = py;
    }
    if (decimate) flush();
    ctx.stroke();
    ctx.setLineDash([]);
  }
  if (spec.cursor && spec.series.length) {
    const s0 = spec.series[0];
    const x = xScale.to(s0.x[spec.cursor.i]);
    ctx.strokeStyle = colors.mark;
    ctx.lineWidth = 1.5;
    ctx.beginPath(); ctx.moveTo(x, plot.y); ctx.lineTo(x, plot.y + plot.h); ctx.stroke();
  }
  ctx.restore();

  // Legend above the plot.
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'left';
  for (const { s, x, y } of legend) {
    ctx.strokeStyle = s.color;
    ctx.lineWidth = 2;
    ctx.setLineDash(s.dash ?? []);
    ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x + 20, y); ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = colors.fg;
    ctx.fillText(s.label, x + 24, y);
  }
  const xs = spec.series[0]?.x ?? [];
  return {
    hit(cx, cy) {
      if (cx < plot.x || cx > plot.x + plot.w || cy < plot.y || cy > plot.y + plot.h || xs.length === 0) return null;
      const target = xScale.from(cx);
      let best = 0;
      for (let i = 1; i < xs.length; i++) if (Math.abs(xs[i] - target) < Math.abs(xs[best] - target)) best = i;
      return { i: best };
    },
  };
}
