// Colour maps as 256-entry RGB lookup tables.
// Diverging: ColorBrewer RdBu, 11 classes (Cynthia Brewer, colorbrewer2.org; colour-blind safe),
// ordered so that -1 is dark blue, 0 near white and +1 dark red.
const RDBU_11 = ['#053061', '#2166ac', '#4393c3', '#92c5de', '#d1e5f0', '#f7f7f7',
  '#fddbc7', '#f4a582', '#d6604d', '#b2182b', '#67001f'];

function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function buildLut(stops) {
  const rgb = stops.map(hexToRgb);
  const lut = new Uint8ClampedArray(256 * 3);
  for (let k = 0; k < 256; k++) {
    const t = (k / 255) * (rgb.length - 1);
    const i = Math.min(Math.floor(t), rgb.length - 2);
    const f = t - i;
    for (let c = 0; c < 3; c++) lut[k * 3 + c] = Math.round(rgb[i][c] * (1 - f) + rgb[i + 1][c] * f);
  }
  return lut;
}

/** Diverging LUT for values in [-1, 1]. */
export const DIVERGING = buildLut(RDBU_11);

/** LUT index of v in [lo, hi] (clamped). */
export function lutIndex(v, lo, hi) {
  const t = (v - lo) / (hi - lo);
  return Math.max(0, Math.min(255, Math.round(t * 255)));
}
