// Every colour the explorer's plots draw data in has WCAG 2.x's contrast against the plot's
// background, on both of the page's themes: 3 : 1 for lines, bars, markers and swatches (SC 1.4.11,
// graphics needed to read the plot) and 4.5 : 1 for text (SC 1.4.3); and the 16 series colours as
// drawn stay at least 10 apart in CIEDE2000 (web/plot/legible.js). web/plot/ holds no DOM code,
// so Node draws each kind of plot on a context that records the colour of each stroke, fill and text.
// The contrast is computed here from WCAG's definition, not with the module's own function, and
// that function is checked against figures WCAG's understanding documents and checkers publish.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SERIES } from '../../web/plot/colormap.js';
import { contrast, legible } from '../../web/plot/legible.js';
import { drawLines } from '../../web/plot/lines.js';
import { drawPanels } from '../../web/plot/panels.js';
import { drawStripPanels } from '../../web/plot/strip.js';
import { SCALING_COLORS } from '../../web/views/lab-extrapolation.js';

// The two themes as web/style.css defines them (:root and :root[data-theme="dark"]).
const css = readFileSync(new URL('../../web/style.css', import.meta.url), 'utf8');
function theme(selector) {
  const block = css.slice(css.indexOf(`${selector} {`)).split('}')[0];
  const get = (name) => new RegExp(`--${name}:\\s*(#[0-9a-fA-F]{6})`).exec(block)[1];
  return { bg: get('bg'), fg: get('fg'), muted: get('muted'), grid: get('grid'), mark: get('mark') };
}
const THEMES = { light: theme(':root'), dark: theme(':root[data-theme="dark"]') };

// WCAG 2.x: relative luminance of sRGB, and (L1 + 0.05) / (L2 + 0.05).
function rgbOf(c) {
  const hex = /^#([0-9a-f]{6})$/i.exec(c);
  if (hex) return [0, 2, 4].map((i) => parseInt(hex[1].slice(i, i + 2), 16));
  const rgb = /^rgb\((\d+),(\d+),(\d+)\)$/.exec(c.replace(/\s/g, ''));
  assert.ok(rgb, `a colour this test cannot read: ${c}`);
  return rgb.slice(1).map(Number);
}
function ratio(a, b) {
  const lum = (c) => {
    const [r, g, bl] = rgbOf(c).map((v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

test('contrast() gives WCAG\'s published ratios', () => {
  // Black on white is the scale's top; #767676 is the lightest grey with 4.5 : 1 on white (4.54),
  // #777777 just misses it (4.48); WebAIM's checker and WCAG's examples give the same figures.
  assert.equal(contrast('#000000', '#ffffff'), 21);
  assert.equal(contrast('#fff', '#ffffff'), 1);
  assert.equal(contrast('#767676', '#ffffff').toFixed(2), '4.54');
  assert.equal(contrast('#777777', 'rgb(255, 255, 255)').toFixed(2), '4.48');
  assert.equal(contrast('red', '#ffffff'), null);
});

// CIEDE2000 (CIE 142-2001), written out here from Sharma, Wu & Dalal 2005 and checked against
// pairs of their published test data, then used to check the colours the module draws.
function de2000([L1, a1, b1], [L2, a2, b2]) {
  const r = Math.PI / 180;
  const Cbar = (Math.sqrt(a1 * a1 + b1 * b1) + Math.sqrt(a2 * a2 + b2 * b2)) / 2;
  const G = 0.5 * (1 - Math.sqrt(Cbar ** 7 / (Cbar ** 7 + 6103515625)));
  const A1 = (1 + G) * a1, A2 = (1 + G) * a2;
  const C1 = Math.sqrt(A1 * A1 + b1 * b1), C2 = Math.sqrt(A2 * A2 + b2 * b2);
  const h = (b, a) => { if (a === 0 && b === 0) return 0; const d = Math.atan2(b, a) / r; return d < 0 ? d + 360 : d; };
  const h1 = h(b1, A1), h2 = h(b2, A2);
  let dh = 0;
  if (C1 * C2 !== 0) dh = h2 - h1 > 180 ? h2 - h1 - 360 : h2 - h1 < -180 ? h2 - h1 + 360 : h2 - h1;
  const dH = 2 * Math.sqrt(C1 * C2) * Math.sin((dh * r) / 2);
  const Lp = (L1 + L2) / 2, Cp = (C1 + C2) / 2;
  let hp = h1 + h2;
  if (C1 * C2 !== 0) hp = Math.abs(h1 - h2) <= 180 ? hp / 2 : hp < 360 ? (hp + 360) / 2 : (hp - 360) / 2;
  const T = 1 - 0.17 * Math.cos((hp - 30) * r) + 0.24 * Math.cos(2 * hp * r) + 0.32 * Math.cos((3 * hp + 6) * r) - 0.2 * Math.cos((4 * hp - 63) * r);
  const SL = 1 + (0.015 * (Lp - 50) ** 2) / Math.sqrt(20 + (Lp - 50) ** 2), SC = 1 + 0.045 * Cp, SH = 1 + 0.015 * Cp * T;
  const RT = -2 * Math.sqrt(Cp ** 7 / (Cp ** 7 + 6103515625)) * Math.sin(60 * Math.exp(-(((hp - 275) / 25) ** 2)) * r);
  const x = (L2 - L1) / SL, y = (C2 - C1) / SC, z = dH / SH;
  return Math.sqrt(x * x + y * y + z * z + RT * y * z);
}
// sRGB to CIE L*a*b* (D65).
function labOf(c) {
  const [r, g, b] = rgbOf(c).map((v) => (v / 255 <= 0.04045 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4));
  const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  const X = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.9505), Y = f(0.2126 * r + 0.7152 * g + 0.0722 * b);
  const Z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.089);
  return [116 * Y - 16, 500 * (X - Y), 200 * (Y - Z)];
}

test('CIEDE2000 as written here gives Sharma, Wu & Dalal\'s published differences', () => {
  for (const [p, q, want] of [[[50, 2.6772, -79.7751], [50, 0, -82.7485], 2.0425], [[50, 3.1571, -77.2803], [50, 0, -82.7485], 2.8615],
    [[50, 0, 0], [50, -1, 2], 2.3669], [[50, 2.49, -0.001], [50, -2.49, 0.0011], 7.2195], [[50, 2.5, 0], [73, 25, -18], 27.1492],
    [[60.2574, -34.0099, 36.2677], [60.4626, -34.1751, 39.4387], 1.2644]]) {
    assert.equal(de2000(p, q).toFixed(4), want.toFixed(4), `${p} against ${q}`);
  }
});

test('the series colours as drawn: 3 : 1 against the background, at least 10 apart (CIEDE2000), most as they are', () => {
  for (const [name, colors] of Object.entries(THEMES)) {
    const drawn = SERIES.map((c) => legible(c, colors));
    drawn.forEach((c, i) => assert.ok(ratio(c, colors.bg) >= 3, `${name}: ${SERIES[i]} drawn as ${c}`));
    for (let i = 0; i < drawn.length; i++) {
      for (let j = i + 1; j < drawn.length; j++) {
        const d = de2000(labOf(drawn[i]), labOf(drawn[j]));
        assert.ok(d >= 10, `${name}: ${SERIES[i]} and ${SERIES[j]} drawn ${d.toFixed(1)} apart (${drawn[i]}, ${drawn[j]})`);
      }
      assert.ok(ratio(legible(SERIES[i], colors, 4.5), colors.bg) >= 4.5, `${name}: ${SERIES[i]} as text`);
    }
    // Okabe & Ito's blue, vermillion and bluish green have the contrast and stand apart on both themes.
    assert.deepEqual(drawn.slice(0, 3), SERIES.slice(0, 3));
    assert.ok(drawn.filter((c, i) => c === SERIES[i]).length >= 8, `${name}: ${drawn}`);
  }
  // Both themes have series colours below 3 : 1 as given, so the rule is needed on both.
  assert.ok(SERIES.some((c) => ratio(c, THEMES.light.bg) < 3) && SERIES.some((c) => ratio(c, THEMES.dark.bg) < 3));
  assert.equal(legible('rgba(0,0,0,0.5)', THEMES.light), 'rgba(0,0,0,0.5)');
});

test('the lab\'s RoPE-scaling colours: 3 : 1 as they are, apart from the series as drawn and each other', () => {
  const scalings = Object.values(SCALING_COLORS);
  for (const [name, colors] of Object.entries(THEMES)) {
    const series = SERIES.map((c) => legible(c, colors));
    for (const c of scalings) {
      assert.equal(legible(c, colors), c, `${name}: ${c} is drawn as it is`);
      assert.ok(ratio(c, colors.bg) >= 3, `${name}: ${c}`);
      const near = Math.min(...series.map((x) => de2000(labOf(c), labOf(x))));
      assert.ok(near >= 12, `${name}: ${c} within ${near.toFixed(1)} of a series colour`);
      const other = Math.min(...scalings.filter((x) => x !== c).map((x) => de2000(labOf(c), labOf(x))));
      assert.ok(other >= 20, `${name}: ${c} within ${other.toFixed(1)} of another scaling's`);
    }
  }
});

// A 2-D context that records [what, colour] for each stroke, fill and text.
function recorder() {
  const ops = [];
  const state = { strokeStyle: '#000000', fillStyle: '#000000', globalAlpha: 1 };
  const ctx = new Proxy({}, {
    get(_, k) {
      if (k === 'measureText') return (t) => ({ width: 7 * String(t).length });
      if (k === 'stroke' || k === 'strokeRect') return () => ops.push(['stroke', state.strokeStyle, state.globalAlpha]);
      if (k === 'fill' || k === 'fillRect') return () => ops.push(['fill', state.fillStyle, state.globalAlpha]);
      if (k === 'fillText') return () => ops.push(['text', state.fillStyle, state.globalAlpha]);
      if (k === 'createImageData') return (w, h) => ({ data: new Uint8ClampedArray(w * h * 4), width: w, height: h });
      if (k in state) return state[k];
      return () => {};
    },
    set(_, k, v) { state[k] = v; return true; },
  });
  return { ctx, ops };
}

const xs = Float64Array.from({ length: 20 }, (_, i) => i);
const linesSpec = {
  series: SERIES.map((color, k) => ({ label: `s${k}`, x: xs, y: xs.map((x) => x * k), color, points: k === 0,
    band: k === 1 ? { lo: xs, hi: xs.map((x) => x + 1) } : undefined })),
  hlines: SERIES.map((color, k) => ({ y: k, label: `h${k}`, color })),
  vlines: [{ x: 3, label: 'v', color: SERIES[6] }],
  texts: [{ x: 5, y: 5, label: 't', color: SERIES[13] }],
};
const PLOTS = {
  lines: (ctx, c) => drawLines(ctx, 900, 400, linesSpec, c),
  bars: (ctx, c) => drawPanels(ctx, 900, 400, { panels: [{ title: 'b', kind: 'bars',
    spec: { bars: SERIES.map((color, k) => ({ label: `b${k}`, value: k + 1, text: String(k), color })) } }] }, c),
  circle: (ctx, c) => drawPanels(ctx, 900, 400, { panels: [{ title: 'c', kind: 'circle',
    spec: { vectors: SERIES.map((color, k) => ({ x: Math.cos(k), y: Math.sin(k), color, label: `v${k}` })),
      arcs: [{ from: 0, to: 1, radius: 0.3, color: SERIES[14] }] } }] }, c),
  strip: (ctx, c) => drawStripPanels(ctx, 900, 400, { strip: { title: 'pairs', groups: Int8Array.from(SERIES, (_, k) => k),
    colors: SERIES, legend: SERIES.map((_, k) => `g${k}`) }, panels: [] }, c),
};

for (const [kind, draw] of Object.entries(PLOTS)) {
  test(`${kind}: every series colour drawn has 3 : 1 against the background, every text 4.5 : 1, light and dark`, () => {
    for (const [name, colors] of Object.entries(THEMES)) {
      const { ctx, ops } = recorder();
      draw(ctx, colors);
      const drawn = new Set(ops.map(([, c]) => c));
      for (const [what, c, alpha] of ops) {
        // The background, the grid, a see-through band or backing and the cursor's shadow are not data.
        if (c === colors.bg || c === colors.grid || alpha < 1 || /^rgba/.test(c)) continue;
        const min = what === 'text' ? 4.5 : 3;
        assert.ok(ratio(c, colors.bg) >= min, `${name} ${kind}: ${what} in ${c}: ${ratio(c, colors.bg).toFixed(2)} : 1`);
      }
      // The data are drawn: each series colour, as drawn, is among the colours used.
      for (const c of SERIES) assert.ok(drawn.has(legible(c, colors)), `${name} ${kind}: ${c} not drawn`);
    }
  });
}

test('where-position: its groups\' colours have 3 : 1, and the current tag\'s text 4.5 : 1 on its fill, light and dark', async () => {
  const { default: view } = await import('../../web/views/where-position.js');
  const { ATTENTION_SCHEMES } = await import('../../web/settings/state.js');
  for (const [name, colors] of Object.entries(THEMES)) {
    for (const scheme of ATTENTION_SCHEMES) {
      for (const width of [1200, 390]) {
        const { ctx, ops } = recorder();
        const { spec } = view.plot(view.compute({ st: { attnScheme: scheme } }), null);
        spec.draw(ctx, width, view.height(width), spec, colors);
        let fill = colors.bg;
        for (const [what, c] of ops) {
          if (what === 'fill') fill = c;
          // The current tag's text, in white or black, is on the tag's fill; the rest is on the background.
          const under = what === 'text' && (c === '#ffffff' || c === '#000000') ? fill : colors.bg;
          if (c === colors.bg || c === colors.grid) continue;
          const min = what === 'text' ? 4.5 : 3;
          assert.ok(ratio(c, under) >= min, `${name} ${scheme} ${width}: ${what} in ${c} on ${under}: ${ratio(c, under).toFixed(2)} : 1`);
        }
      }
    }
  }
});
