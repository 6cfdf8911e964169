// Colour maps as 256-entry RGB lookup tables, both safe for colour-blind readers.
// Diverging (signed data): ColorBrewer RdBu, 11 classes (Cynthia Brewer, colorbrewer2.org),
//   ordered so that -1 is dark blue, 0 near white and +1 dark red.
// Sequential (weights, magnitudes): viridis (van der Walt & Smith, matplotlib), 9 stops.
const RDBU_11 = ['#053061', '#2166ac', '#4393c3', '#92c5de', '#d1e5f0', '#f7f7f7',
  '#fddbc7', '#f4a582', '#d6604d', '#b2182b', '#67001f'];
const VIRIDIS_9 = ['#440154', '#472d7b', '#3b528b', '#2c728e', '#21918c', '#28ae80', '#5ec962',
  '#addc30', '#fde725'];

/** Series colours: Okabe & Ito 2008's eight, distinguishable with any colour vision, then eight of
 * Paul Tol's (purple, green, red, teal, wine, sand, indigo, dark green), so that each of the lab's
 * schemes (up to 16) gets its own: web/lab/lab.js picks one by the scheme's place in pe.lab.schemes.
 * Drawn through legible() (web/plot/legible.js), which darkens or lightens those a theme's
 * background would hide or that would come too close to another. */
export const SERIES = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#F0E442', '#999999',
  '#AA3377', '#228833', '#EE6677', '#44AA99', '#882255', '#DDCC77', '#332288', '#117733'];

export function hexToRgb(hex) {
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

export const DIVERGING = buildLut(RDBU_11);
export const SEQUENTIAL = buildLut(VIRIDIS_9);
