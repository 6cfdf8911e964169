// Heatmaps: ImageData, one image pixel per cell (or per device pixel when cells are smaller),
// scaled without smoothing; a colour bar; a crosshair cursor that shows on any colour.
import { FONT, axisScale, drawAxes, formatTick, frame, niceTicks, tickLabels } from './core.js';

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

/** CSS colour of value t in [0, 1] on a LUT. */
export function lutColor(lut, t) {
  const k = Math.max(0, Math.min(255, Math.round(t * 255))) * 3;
  return `rgb(${lut[k]},${lut[k + 1]},${lut[k + 2]})`;
}

// Offscreen canvases and ImageData reused across draws, one per size and purpose.
const scratch = new Map();
function scratchCanvas(w, h, key) {
  let c = scratch.get(key);
  if (!c || c.width < w || c.height < h) {
    c = new OffscreenCanvas(Math.max(w, c?.width ?? 0), Math.max(h, c?.height ?? 0));
    scratch.set(key, c);
  }
  return c;
}
const images = new Map();
function scratchImage(w, h) {
  const key = `${w}x${h}`;
  let im = images.get(key);
  if (!im) {
    if (images.size > 16) images.clear();
    im = new ImageData(w, h);
    images.set(key, im);
  }
  return im;
}

/** Heatmap CSV: one line per cell. */
export function heatmapCsv(d, xName, yName, vName) {
  const rows = [`${xName},${yName},${vName}`];
  for (let x = 0; x < d.nx; x++) {
    for (let y = 0; y < d.ny; y++) rows.push(`${d.xs ? d.xs[x] : x},${d.ys ? d.ys[y] : y},${d.values[x * d.ny + y]}`);
  }
  return `${rows.join('\n')}\n`;
}

/**
 * Heatmap of values[x * ny + y] (x-major), x along the horizontal axis, y upwards — or downwards
 * with yDown (row 0 at the top: every query × key map, so query 0 is the top row as in the
 * attention matrices).
 * spec: { values, nx, ny, xDomain: [first, last] (labels of cells 0 and nx-1), yDomain, lo, hi,
 *         lut, xLabel, yLabel, legendLabel, legend: false to omit the bar, square: square cells,
 *         yDown, xCategories: a label per column instead of numeric ticks,
 *         cursor: { x, y } | null }
 */
export function drawHeatmap(ctx, width, height, spec, colors) {
  const { values, nx, ny, lo, hi, lut } = spec;
  const [x0, x1] = spec.xDomain ?? [0, nx - 1], [y0, y1] = spec.yDomain ?? [0, ny - 1];
  const legend = spec.legend !== false;
  const yTicks = niceTicks(y0, y1, Math.max(2, Math.floor((height - 60) / 40)));
  const plot = frame(ctx, width, height, { yLabels: tickLabels(yTicks), right: legend ? 80 : 10, top: spec.top ?? 14 });
  if (spec.square) {  // square cells: the map takes the grid's own proportions
    const cell = Math.min(plot.w / nx, plot.h / ny);
    plot.w = cell * nx;
    plot.h = cell * ny;
  }
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  // One image pixel per device pixel at most: columns (rows) beyond that are sampled, nearest.
  const dpr = ctx.getTransform().a || 1;
  const iw = Math.min(nx, Math.max(1, Math.ceil(plot.w * dpr))), ih = Math.min(ny, Math.max(1, Math.ceil(plot.h * dpr)));
  const image = scratchImage(iw, ih);
  const px = new Uint32Array(image.data.buffer);
  const palette = paletteOf(lut);
  const scale = 255 / (hi - lo || 1);
  const masked = 0x28808080;  // -Infinity (masked): faint grey, "−∞" in the read-out
  const down = Boolean(spec.yDown);
  for (let c = 0; c < iw; c++) {
    const x = iw === nx ? c : Math.floor(((c + 0.5) * nx) / iw);
    const column = x * ny;
    for (let r = 0; r < ih; r++) {
      const y = ih === ny ? r : Math.floor(((r + 0.5) * ny) / ih);
      const v = values[column + y];
      const t = (v - lo) * scale;
      px[(down ? r : ih - 1 - r) * iw + c] = v === -Infinity ? masked : palette[t > 0 ? (t < 255 ? (t + 0.5) | 0 : 255) : 0];
    }
  }
  const off = scratchCanvas(iw, ih, 'image');
  off.getContext('2d').putImageData(image, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(off, 0, 0, iw, ih, plot.x, plot.y, plot.w, plot.h);

  // Cell centres: cell c spans [c, c+1) of nx, labelled xDomain[0] + c * step.
  const xStep = nx > 1 ? (x1 - x0) / (nx - 1) : 1, yStep = ny > 1 ? (y1 - y0) / (ny - 1) : 1;
  const xScale = { to: (v) => plot.x + (((v - x0) / xStep + 0.5) / nx) * plot.w,
    ticks: axisScale({}, x0, x1, { start: 0, size: plot.w }, false).ticks };
  if (spec.xCategories) Object.assign(xScale, { ticks: spec.xCategories.map((_, i) => i), labels: spec.xCategories });
  const yFrac = (v) => ((v - y0) / yStep + 0.5) / ny;
  const yScale = { to: (v) => (down ? plot.y + yFrac(v) * plot.h : plot.y + plot.h - yFrac(v) * plot.h), ticks: yTicks };
  // A square map can be shorter than its panel: its x title goes right under it, not to the panel's foot.
  const axesHeight = spec.square ? Math.min(height, plot.y + plot.h + 42) : height;
  drawAxes(ctx, plot, colors, { xLabel: spec.xLabel, yLabel: spec.yLabel, xScale, yScale, height: axesHeight });
  if (legend) drawColorBar(ctx, { x: plot.x + plot.w + 12, y: plot.y, w: 12, h: plot.h }, spec, palette, colors);

  if (spec.cursor) drawCrosshair(ctx, plot, nx, ny, spec.cursor, down);
  return {
    plot, yDown: down,
    hit(cx, cy) {
      const fx = (cx - plot.x) / plot.w, fy = (cy - plot.y) / plot.h;
      if (fx < 0 || fx >= 1 || fy < 0 || fy >= 1) return null;
      const row = Math.floor(fy * ny);
      return { x: Math.floor(fx * nx), y: down ? row : ny - 1 - row };
    },
  };
}

function drawColorBar(ctx, bar, spec, palette, colors) {
  const { lo, hi } = spec;
  const ramp = new ImageData(1, 256);
  const rampPx = new Uint32Array(ramp.data.buffer);
  for (let i = 0; i < 256; i++) rampPx[i] = palette[255 - i];
  const rampCanvas = scratchCanvas(1, 256, 'ramp');
  rampCanvas.getContext('2d').putImageData(ramp, 0, 0);
  ctx.imageSmoothingEnabled = true;
  ctx.drawImage(rampCanvas, 0, 0, 1, 256, bar.x, bar.y, bar.w, bar.h);
  ctx.strokeStyle = colors.muted;
  ctx.lineWidth = 1;
  ctx.strokeRect(bar.x - 0.5, bar.y - 0.5, bar.w + 1, bar.h + 1);
  ctx.fillStyle = colors.fg;
  ctx.font = FONT;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  const ticks = niceTicks(lo, hi, Math.max(2, Math.min(4, Math.floor(bar.h / 40))));
  const labels = ticks.map((t) => formatTick(t));
  ticks.forEach((t, k) => {
    const y = bar.y + ((hi - t) / (hi - lo || 1)) * bar.h;
    ctx.beginPath(); ctx.moveTo(bar.x + bar.w, y); ctx.lineTo(bar.x + bar.w + 4, y); ctx.stroke();
    ctx.fillText(labels[k], bar.x + bar.w + 6, y, 40);
  });
  ctx.save();
  ctx.translate(bar.x + bar.w + 48, bar.y + bar.h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = 'center';
  ctx.fillText(spec.legendLabel, 0, 0, bar.h);
  ctx.restore();
}

/** Full-width and full-height lines through the cursor cell: dark under light, visible on any colour. */
function drawCrosshair(ctx, plot, nx, ny, cursor, down) {
  const cw = plot.w / nx, ch = plot.h / ny;
  const cx = plot.x + (cursor.x + 0.5) * cw, cy = plot.y + ((down ? cursor.y : ny - 1 - cursor.y) + 0.5) * ch;
  ctx.save();
  ctx.beginPath();
  ctx.rect(plot.x, plot.y, plot.w, plot.h);
  ctx.clip();
  for (const [style, width] of [['rgba(0,0,0,0.85)', 3], ['#ffffff', 1]]) {
    ctx.strokeStyle = style;
    ctx.lineWidth = width;
    ctx.beginPath();
    ctx.moveTo(cx, plot.y); ctx.lineTo(cx, plot.y + plot.h);
    ctx.moveTo(plot.x, cy); ctx.lineTo(plot.x + plot.w, cy);
    ctx.stroke();
    const s = Math.max(6, Math.min(cw, ch));
    ctx.strokeRect(cx - s / 2 - 2, cy - s / 2 - 2, s + 4, s + 4);
  }
  ctx.restore();
}
