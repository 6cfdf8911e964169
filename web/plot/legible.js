// The plots' colours on either theme: each drawn with WCAG 2.x's contrast against the background
// (3 : 1 for lines, bars, markers and swatches, SC 1.4.11; 4.5 : 1 for labels, SC 1.4.3), and the
// series colours kept apart from each other (a CIEDE2000 difference of at least 10), by mixing a
// colour toward the theme's text colour, 5 % at a time, as far as it takes.
import { SERIES, hexToRgb } from './colormap.js';
import { themeColors } from './core.js';

const STEPS = 20;  // a colour is mixed toward the text colour 1/20 at a time
const APART = 10;  // the least CIEDE2000 difference between two series colours as drawn

// '#rgb', '#rrggbb' or 'rgb(r, g, b)' as [r, g, b]; null for any other CSS colour.
function parseRgb(css) {
  if (/^#[0-9a-f]{6}$/i.test(css)) return hexToRgb(css);
  if (/^#[0-9a-f]{3}$/i.test(css)) return hexToRgb(`#${[...css.slice(1)].map((c) => c + c).join('')}`);
  const m = /^rgb\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(css);
  return m ? [+m[1], +m[2], +m[3]] : null;
}

const linear = (v) => (v / 255 <= 0.04045 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);

// WCAG 2.x relative luminance, and the contrast ratio of two [r, g, b].
const luminance = ([r, g, b]) => 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
function ratio(x, y) {
  const [hi, lo] = [luminance(x), luminance(y)].sort((p, q) => q - p);
  return (hi + 0.05) / (lo + 0.05);
}

/** WCAG 2.x contrast ratio of two colours, from 1 to 21; null when either is not '#…' or 'rgb(…)'. */
export function contrast(a, b) {
  const x = parseRgb(a), y = parseRgb(b);
  return x && y ? ratio(x, y) : null;
}

// CIE L*a*b* (D65 white) of an sRGB [r, g, b].
function toLab(rgb) {
  const [r, g, b] = rgb.map(linear);
  const f = (t) => (t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116);
  const x = f((0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047);
  const y = f(0.2126729 * r + 0.7151522 * g + 0.072175 * b);
  const z = f((0.0193339 * r + 0.119192 * g + 0.9503041 * b) / 1.08883);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}

/*
 * CIEDE2000 colour difference of two L*a*b* colours (CIE 142-2001, as Sharma, Wu & Dalal 2005 give it):
 * a' = a(1 + G) with G = ½(1 − √(C̄⁷ / (C̄⁷ + 25⁷))), C' and h' from a' and b; then
 * ΔE = √((ΔL'/S_L)² + (ΔC'/S_C)² + (ΔH'/S_H)² + R_T (ΔC'/S_C)(ΔH'/S_H)), with ΔH' = 2√(C'₁C'₂) sin(Δh'/2),
 * S_L = 1 + 0.015(L̄' − 50)² / √(20 + (L̄' − 50)²), S_C = 1 + 0.045 C̄', S_H = 1 + 0.015 C̄' T,
 * T = 1 − 0.17 cos(h̄' − 30°) + 0.24 cos 2h̄' + 0.32 cos(3h̄' + 6°) − 0.20 cos(4h̄' − 63°),
 * R_T = −2√(C̄'⁷ / (C̄'⁷ + 25⁷)) sin(60° exp(−((h̄' − 275°) / 25°)²)).
 */
function deltaE([L1, a1, b1], [L2, a2, b2]) {
  const deg = Math.PI / 180, c7 = (c) => Math.sqrt(c ** 7 / (c ** 7 + 25 ** 7));
  const G = 0.5 * (1 - c7((Math.hypot(a1, b1) + Math.hypot(a2, b2)) / 2));
  const [p1, p2] = [[a1 * (1 + G), b1], [a2 * (1 + G), b2]];
  const [C1, C2] = [Math.hypot(...p1), Math.hypot(...p2)];
  const hue = ([a, b]) => (a === 0 && b === 0 ? 0 : (Math.atan2(b, a) / deg + 360) % 360);
  const [h1, h2] = [hue(p1), hue(p2)];
  let dh = C1 * C2 === 0 ? 0 : h2 - h1;
  if (dh > 180) dh -= 360; else if (dh < -180) dh += 360;
  let hm = h1 + h2;
  if (C1 * C2 !== 0) hm = Math.abs(h1 - h2) <= 180 ? hm / 2 : (hm + (hm < 360 ? 360 : -360)) / 2;
  const Lm = (L1 + L2) / 2, Cm = (C1 + C2) / 2;
  const T = 1 - 0.17 * Math.cos((hm - 30) * deg) + 0.24 * Math.cos(2 * hm * deg) + 0.32 * Math.cos((3 * hm + 6) * deg)
    - 0.2 * Math.cos((4 * hm - 63) * deg);
  const SL = 1 + (0.015 * (Lm - 50) ** 2) / Math.sqrt(20 + (Lm - 50) ** 2), SC = 1 + 0.045 * Cm, SH = 1 + 0.015 * Cm * T;
  const RT = -2 * c7(Cm) * Math.sin(60 * Math.exp(-(((hm - 275) / 25) ** 2)) * deg);
  const [dL, dC, dH] = [(L2 - L1) / SL, (C2 - C1) / SC, (2 * Math.sqrt(C1 * C2) * Math.sin((dh / 2) * deg)) / SH];
  return Math.sqrt(dL ** 2 + dC ** 2 + dH ** 2 + RT * dC * dH);
}

// From colour c toward the text colour fg by step / STEPS.
const mixed = (c, fg, step) => c.map((v, i) => Math.round(v + ((fg[i] - v) * step) / STEPS));

// The series colours as drawn on a theme, in SERIES's order: each mixed until it has 3 : 1, then on
// while it is within APART of an earlier one as drawn. Mixing toward the text colour draws colours
// together: on the dark theme Tol's purple and wine, lightened only to 3 : 1, were 4.8 apart.
const palettes = new Map();
function seriesOn(bg, fg) {
  const key = `${bg}|${fg}`;
  if (!palettes.has(key)) {
    const drawn = [];
    for (const hex of SERIES) {
      const c = hexToRgb(hex);
      let step = 0, out = c;
      while (step < STEPS && ratio(out, bg) < 3) out = mixed(c, fg, ++step);
      while (step < STEPS && drawn.some((d) => deltaE(toLab(d), toLab(out)) < APART)) out = mixed(c, fg, ++step);
      drawn.push(out);
    }
    palettes.set(key, new Map(SERIES.map((hex, i) => [hex.toLowerCase(), drawn[i]])));
  }
  return palettes.get(key);
}

const cache = new Map();
/**
 * The colour to draw `color` in on colors.bg: a series colour as seriesOn gives it, any other as
 * it is while it has `min` : 1 (3 for graphics, 4.5 for a label), each mixed toward colors.fg as far
 * as `min` takes. On white six of the 16 series colours change for contrast (Okabe–Ito's orange, sky
 * blue, yellow and grey, Tol's teal and sand) and two more to stay apart, on the dark theme three for
 * contrast (Tol's purple, wine, indigo) and two to stay apart; labels change a few more. A colour it
 * cannot read (a name, one with alpha) is returned as is, and so is one it leaves alone.
 */
export function legible(color, colors, min = 3) {
  const key = `${color}|${colors.bg}|${colors.fg}|${min}`;
  if (cache.has(key)) return cache.get(key);
  const bg = parseRgb(colors.bg), fg = parseRgb(colors.fg), c = parseRgb(color);
  let out = color;
  if (bg && fg && c) {
    const start = seriesOn(bg, fg).get(color.toLowerCase()) ?? c;
    let rgb = start;
    for (let step = 1; step <= STEPS && ratio(rgb, bg) < min; step++) rgb = mixed(start, fg, step);
    if (rgb.some((v, i) => v !== c[i])) out = `rgb(${rgb.join(',')})`;
  }
  cache.set(key, out);
  return out;
}

/** For HTML beside a plot (a legend's swatch): each colour as legible() draws it on element's theme. */
export function legibleOn(element) {
  const colors = themeColors(element);
  return (color) => legible(color, colors);
}
