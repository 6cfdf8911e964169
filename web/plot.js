// Canvas plotting helpers: sizing for the device pixel ratio, nice ticks, axes and a colour legend.
import { lutIndex } from './colormap.js';

/** Resizes the canvas backing store to its CSS size × devicePixelRatio; returns a 2D context in CSS px. */
export function fitCanvas(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const { width, height } = canvas.getBoundingClientRect();
  const w = Math.max(1, Math.round(width * dpr));
  const h = Math.max(1, Math.round(height * dpr));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx, width, height };
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

export function themeColors(element) {
  const css = getComputedStyle(element);
  return { fg: css.getPropertyValue('--fg').trim() || '#000', muted: css.getPropertyValue('--muted').trim() || '#666' };
}

/**
 * Draws a [rows × cols] grid of values (row-major in `values` as [col][row], i.e. x-major) as an
 * image, x = column index, y = row index increasing upwards, with axes and a legend.
 */
export function drawHeatmap(canvas, { values, nx, ny, lo, hi, lut, xLabel, yLabel, legendLabel }) {
  const { ctx, width, height } = fitCanvas(canvas);
  const colors = themeColors(canvas);
  const m = { left: 58, right: 92, top: 12, bottom: 46 };
  const plot = { x: m.left, y: m.top, w: Math.max(10, width - m.left - m.right), h: Math.max(10, height - m.top - m.bottom) };
  ctx.clearRect(0, 0, width, height);

  // The image: one pixel per (x, y) cell, scaled up without smoothing.
  const image = new ImageData(nx, ny);
  const px = image.data;
  for (let x = 0; x < nx; x++) {
    for (let y = 0; y < ny; y++) {
      const k = lutIndex(values[x * ny + y], lo, hi) * 3;
      const o = ((ny - 1 - y) * nx + x) * 4;
      px[o] = lut[k]; px[o + 1] = lut[k + 1]; px[o + 2] = lut[k + 2]; px[o + 3] = 255;
    }
  }
  const off = new OffscreenCanvas(nx, ny);
  off.getContext('2d').putImageData(image, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(off, plot.x, plot.y, plot.w, plot.h);

  // Axes: cell centres at index + 0.5.
  ctx.strokeStyle = colors.muted;
  ctx.fillStyle = colors.fg;
  ctx.lineWidth = 1;
  ctx.font = '12px "DejaVu Sans", sans-serif';
  ctx.strokeRect(plot.x - 0.5, plot.y - 0.5, plot.w + 1, plot.h + 1);
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const t of niceTicks(0, nx - 1, Math.max(2, Math.floor(plot.w / 80)))) {
    const x = plot.x + ((t + 0.5) / nx) * plot.w;
    ctx.beginPath(); ctx.moveTo(x, plot.y + plot.h); ctx.lineTo(x, plot.y + plot.h + 5); ctx.stroke();
    ctx.fillText(String(t), x, plot.y + plot.h + 7);
  }
  ctx.fillText(xLabel, plot.x + plot.w / 2, height - 16);
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const t of niceTicks(0, ny - 1, Math.max(2, Math.floor(plot.h / 50)))) {
    const y = plot.y + plot.h - ((t + 0.5) / ny) * plot.h;
    ctx.beginPath(); ctx.moveTo(plot.x - 5, y); ctx.lineTo(plot.x, y); ctx.stroke();
    ctx.fillText(String(t), plot.x - 7, y);
  }
  ctx.save();
  ctx.translate(14, plot.y + plot.h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = 'center';
  ctx.fillText(yLabel, 0, 0);
  ctx.restore();

  // Legend: a vertical colour bar with ticks.
  const bar = { x: plot.x + plot.w + 18, y: plot.y, w: 14, h: plot.h };
  for (let i = 0; i < bar.h; i++) {
    const k = lutIndex(hi - ((hi - lo) * i) / Math.max(1, bar.h - 1), lo, hi) * 3;
    ctx.fillStyle = `rgb(${lut[k]},${lut[k + 1]},${lut[k + 2]})`;
    ctx.fillRect(bar.x, bar.y + i, bar.w, 1);
  }
  ctx.strokeRect(bar.x - 0.5, bar.y - 0.5, bar.w + 1, bar.h + 1);
  ctx.fillStyle = colors.fg;
  ctx.textAlign = 'left';
  for (const t of niceTicks(lo, hi, 4)) {
    const y = bar.y + ((hi - t) / (hi - lo)) * bar.h;
    ctx.beginPath(); ctx.moveTo(bar.x + bar.w, y); ctx.lineTo(bar.x + bar.w + 4, y); ctx.stroke();
    ctx.fillText(String(t), bar.x + bar.w + 6, y);
  }
  ctx.save();
  ctx.translate(width - 8, plot.y + plot.h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = 'center';
  ctx.fillText(legendLabel, 0, 0);
  ctx.restore();

  return plot;
}

/** The (x, y) cell under a mouse event, or null outside the plot. */
export function cellAt(event, canvas, plot, nx, ny) {
  const r = canvas.getBoundingClientRect();
  const fx = (event.clientX - r.left - plot.x) / plot.w;
  const fy = (event.clientY - r.top - plot.y) / plot.h;
  if (fx < 0 || fx >= 1 || fy < 0 || fy >= 1) return null;
  return { x: Math.floor(fx * nx), y: ny - 1 - Math.floor(fy * ny) };
}
