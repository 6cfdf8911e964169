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
 * Drawn through legible() below, which darkens or lightens those a theme's background would hide. */
export const SERIES = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#F0E442', '#999999',
  '#AA3377', '#228833', '#EE6677', '#44AA99', '#882255', '#DDCC77', '#332288', '#117733'];

function hexToRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

// '#rgb', '#rrggbb' or 'rgb(r, g, b)' as [r, g, b]; null for any other CSS colour.
function parseRgb(css) {
  if (/^#[0-9a-f]{6}$/i.test(css)) return hexToRgb(css);
  if (/^#[0-9a-f]{3}$/i.test(css)) return hexToRgb(`#${[...css.slice(1)].map((c) => c + c).join('')}`);
  const m = /^rgb\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(css);
  return m ? [+m[1], +m[2], +m[3]] : null;
}

// WCAG 2.x relative luminance of an sRGB colour.
function luminance(rgb) {
  const [r, g, b] = rgb.map((v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2.x contrast ratio of two colours, from 1 to 21; null when either is not '#…' or 'rgb(…)'. */
export function contrast(a, b) {
  const x = parseRgb(a), y = parseRgb(b);
  if (!x || !y) return null;
  const [hi, lo] = [luminance(x), luminance(y)].sort((p, q) => q - p);
  return (hi + 0.05) / (lo + 0.05);
}

const legibleCache = new Map();
/**
 * The colour to draw a series (or, with min 4.5, a text) in on the plot's background: the colour
 * itself when it has WCAG's contrast for graphics (3 : 1, SC 1.4.11) or small text (4.5 : 1, SC
 * 1.4.3) against colors.bg, else mixed toward the theme's text colour in steps of 5 % until it has.
 * For lines on white that changes six of the 16 series colours (Okabe–Ito's orange, sky blue, yellow
 * and grey, Tol's teal and sand), on the dark theme three (Tol's purple, wine and indigo); labels,
 * at 4.5 : 1, change a few more. A colour it cannot read (a name, one with alpha) is returned as is.
 */
export function legible(color, colors, min = 3) {
  const key = `${color}|${colors.bg}|${colors.fg}|${min}`;
  let out = legibleCache.get(key);
  if (out !== undefined) return out;
  out = color;
  const c = parseRgb(color), fg = parseRgb(colors.fg);
  if (c && fg && contrast(color, colors.bg) !== null) {
    for (let step = 1; step <= 20 && contrast(out, colors.bg) < min; step++) {
      out = `rgb(${c.map((v, i) => Math.round(v + ((fg[i] - v) * step) / 20)).join(',')})`;
    }
  }
  legibleCache.set(key, out);
  return out;
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
