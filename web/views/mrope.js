// M-RoPE (Qwen2-VL / Qwen2.5-VL; Qwen3-VL interleaved): the rotary pairs split into temporal,
// height and width sections, each turned by its own position id; the ids of a text run followed by
// an image grid, and each section's angle across that grid (chapter "rope").
import { DIVERGING, SERIES } from '../plot/colormap.js';
import { linesCsv } from '../plot/lines.js';
import { panelsHeight } from '../plot/panels.js';
import { drawStripPanels, stripHeight } from '../plot/strip.js';
import { moveStripPanels } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { ropeParams, ropeRule } from '../settings/rope-settings.js';
import { tile } from './shared/vectors.js';
import { OFFLOAD_VALUES } from '../page/offload.js';

const NAMES = ['temporal', 'height', 'width'];
const COLORS = [SERIES[0], SERIES[1], SERIES[2]];
const PANEL = 230, MIN_WIDTH = 250, AFTER = 4;  // text tokens after the image

/** The sections the settings ask for, or Qwen2-VL's 2 : 3 : 3 split of these pairs when they do not fit. */
function sectionsFor(text, pairs) {
  const asked = text.split(',').map((s) => Number(s.trim()));
  const ok = asked.length === 3 && asked.every((n) => Number.isInteger(n) && n >= 0) && asked[0] + asked[1] + asked[2] === pairs;
  if (ok) return { section: asked, asked: null };
  const t = Math.round(pairs / 4), h = Math.round((pairs - t) / 2);
  return { section: [t, h, pairs - t - h], asked: text };
}

/** The angle of every rotary pair at every token, from the package's rotation of a unit x-part. */
function anglesOf(pe, params, d, rot, positions, n) {
  const unit = new Float32Array(d);
  unit.fill(1, 0, rot / 2);
  const y = pe.applyRope(tile(unit, n), { seqLen: n, nHeads: 1, headDim: d, params, positions, layout: 'halfSplit' });
  const half = rot / 2, out = new Float64Array(n * half);
  for (let s = 0; s < n; s++) for (let i = 0; i < half; i++) out[s * half + i] = Math.atan2(y[s * d + i + half], y[s * d + i]);
  return out;
}

/** The pairs of each section, the ids and the angles drawn, for args from compute: here or in the
 * page's compute worker (web/page/offload.js), which runs it past OFFLOAD_VALUES rotated values. */
function work(pe, { d, rot, section, asked, params, theta, text, t, h, w }) {
  const pairs = rot / 2;
  // Which pair each id turns: rotate at ids (1, 0, 0), (0, 1, 0) and (0, 0, 1).
  const probe = anglesOf(pe, params, d, rot, [1, 0, 0, 0, 1, 0, 0, 0, 1], 3);
  const groups = new Int8Array(pairs).fill(-1), thetas = new Float64Array(pairs);
  for (let i = 0; i < pairs; i++) {
    for (let g = 0; g < 3; g++) if (probe[g * pairs + i] !== 0) { groups[i] = g; thetas[i] = probe[g * pairs + i]; }
  }
  const ids = pe.mropePositions([{ text }, { image: [t, h, w] }, { text: AFTER }]);
  const n = ids.length / 3;
  const angles = anglesOf(pe, params, d, rot, ids, n);
  const xs = Float64Array.from({ length: n }, (_, k) => k);
  const idSeries = NAMES.map((name, g) => ({ label: `${name} id`, x: xs, y: ids.subarray(g * n, (g + 1) * n), color: COLORS[g],
    step: true, width: g === 0 ? 3 : 1.6, dash: g === 2 ? [5, 3] : undefined }));
  // Each section's fastest pair over the first frame of the image.
  const grids = [0, 1, 2].map((g) => {
    const pair = groups.indexOf(g);
    const values = new Float32Array(w * h), angle = new Float64Array(w * h), id = new Float64Array(w * h);
    for (let c = 0; c < w; c++) {
      for (let r = 0; r < h; r++) {
        const token = text + r * w + c;
        angle[c * h + r] = angles[token * pairs + pair];
        values[c * h + r] = Math.cos(angle[c * h + r]);
        id[c * h + r] = ids[g * n + token];
      }
    }
    return { g, pair, values, angle, id };
  });
  return { theta, d, pairs, section, asked, interleaved: params.mrope.interleaved, groups, thetas, ids, n, xs, idSeries, grids,
    w, h, t, text };
}

export default {
  id: 'mrope',
  controls: [
    ['mropeSection', { kind: 'text' }],
    ['mropeInterleaved', { kind: 'checkbox' }],
    ['mropeText', { label: 'text tokens before' }],
    ['mropeT', { label: 'image t' }],
    ['mropeH', { label: 'image h', slider: { min: 1, max: 64 } }],
    ['mropeW', { label: 'image w', slider: { min: 1, max: 64 } }],
  ],
  height: (width) => stripHeight(width, NAMES) + panelsHeight(4, width, PANEL, MIN_WIDTH),
  work,
  compute({ pe, st, extras, offload }) {
    const rule = ropeRule(st, 'none');  // unscaled frequencies only
    if (rule) throw new Error(rule);
    const d = st.dModel, base = ropeParams(st, extras);
    const { rotaryDim: rot } = pe.ropeFrequencies(base);
    if (rot / 2 < 3) {
      throw new Error('M-RoPE needs at least 3 rotary pairs for its three sections; '
        + `head_dim ${d} × partial rotary ${st.partial} gives ${rot / 2}.`);
    }
    const { section, asked } = sectionsFor(st.mropeSection, rot / 2);
    const args = { d, rot, section, asked, params: { ...base, mrope: { section, interleaved: st.mropeInterleaved } },
      theta: st.theta, text: st.mropeText, t: st.mropeT, h: st.mropeH, w: st.mropeW };
    const tokens = args.text + args.t * args.h * args.w + AFTER;
    return tokens * d > OFFLOAD_VALUES ? offload('mrope', args) : work(pe, args);
  },
  plot(data, cursor, width) {
    const range = (g) => {
      const idx = [];
      data.groups.forEach((x, i) => { if (x === g) idx.push(i); });
      return data.interleaved ? `${idx.length} pairs` : `pairs ${idx[0]}–${idx[idx.length - 1]}`;
    };
    const legend = NAMES.map((name, g) => `${name} (${range(g)})`);
    const panels = [
      { title: 'position ids of each token', kind: 'lines', spec: { series: data.idSeries, yLabel: 'position id',
        xLabel: `token (text ${data.text}, image ${data.t}×${data.h}×${data.w}, text ${AFTER})` } },
      ...data.grids.map((gr) => ({ kind: 'heatmap',
        title: `${NAMES[gr.g]} section, pair ${gr.pair}: cos(${NAMES[gr.g][0]}·θ)`, spec: {
        values: gr.values, nx: data.w, ny: data.h, lo: -1, hi: 1, lut: DIVERGING, square: true, legend: gr.g === 2,
        xLabel: 'patch column', yLabel: 'patch row (0 at top)', yDown: true, legendLabel: 'cos(angle)' } })),
    ];
    const c = cursor && (cursor.panel === 0 ? { ...cursor, i: cursor.i ?? cursor.x } : cursor);
    // A phone gets the strip's caption short enough to stay legible on one line.
    const title = width < 600 ? `${data.pairs} pairs by id (0 = fastest)`
      : `${data.pairs} rotary pairs of one head (0 = fastest), coloured by the id that turns them`;
    return { kind: 'custom', spec: { draw: drawStripPanels, minWidth: MIN_WIDTH, cursor: c, panels,
      strip: { title, groups: data.groups, colors: COLORS, legend } } };
  },
  // The maps' row 0 at the top; up and down also between the strip, the ids and the maps.
  move: (data, c, key, layout) => moveStripPanels({ panel: c.panel, x: c.i ?? c.x, y: c.panel === 0 ? 0 : c.y }, data.pairs,
    [{ nx: data.n, ny: 1 }, ...data.grids.map(() => ({ nx: data.w, ny: data.h, down: true }))], key, layout),
  note(data) {
    const s = data.section.join(', ');
    const fixed = data.asked ? `Sections “${data.asked}” do not sum to the ${data.pairs} rotary pairs of head_dim ${data.d}: `
      + `drawn with ${s} (Qwen2-VL's 2 : 3 : 3 split) instead. ` : '';
    const last = data.ids[data.n - 1];
    const frames = data.t > 1
      ? ` The maps show the first of the image's ${data.t} frames (the next frame's temporal id is one more).` : '';
    const turns = data.grids.map((gr) => {
      let lo = Infinity, hi = -Infinity;
      for (const id of gr.id) { lo = Math.min(lo, id); hi = Math.max(hi, id); }
      return `${NAMES[gr.g]} ${fmt((hi - lo) * data.thetas[gr.pair], 3)} rad`;
    });
    // Interleaved (t, h, w, t, h, w, …), HF gives h and w the pairs up to 3 × their counts and t the rest:
    // counts that do not fit that way (16, 24, 24 of 64 pairs) come out otherwise.
    const counts = [0, 1, 2].map((g) => data.groups.filter((x) => x === g).length);
    const dealt = data.interleaved && counts.some((c, g) => c !== data.section[g])
      ? ` (dealt t, h, w in turn, HF's way, it gives ${counts.join(' : ')} pairs; Qwen3-VL's 24, 20, 20 of 64 pairs comes out as given)` : '';
    return `${fixed}Across the image, each section's fastest pair turns by ${turns.join(', ')}. `
      + `mrope_section ${s}${data.interleaved ? `, interleaved${dealt}` : ''}; ${data.n} tokens, the last at id ${last} `
      + `(a plain RoPE sequence would end at ${data.n - 1}: an image costs max(t, h, w) ids, not t·h·w).${frames}`
      + (data.theta === 1e6 ? '' : ` The angles use this page's θ = ${data.theta}; Qwen2.5-VL-7B's rope_theta is 1,000,000 `
        + '(its preset draws its own).');
  },
  readout(data, c, st) {
    if (c.panel === -1) {
      return `pair ${c.x}: ${NAMES[data.groups[c.x]]} section, θ = ${fmt(data.thetas[c.x], 6)} rad per id (θ = ${st.theta})`;
    }
    if (c.panel === 0) {
      const k = c.i ?? c.x;
      const kind = k < data.text ? 'text' : k < data.text + data.t * data.h * data.w ? 'image patch' : 'text';
      return `token ${k} (${kind}): ids t = ${data.ids[k]}, h = ${data.ids[data.n + k]}, w = ${data.ids[2 * data.n + k]}`;
    }
    const gr = data.grids[c.panel - 1], j = c.x * data.h + c.y;
    return `patch row ${c.y}, column ${c.x}: ${NAMES[gr.g]} id ${gr.id[j]}, pair ${gr.pair} turned by ${fmt(gr.angle[j], 5)} rad `
      + `(cos ${fmt(gr.values[j], 4)})`;
  },
  csv(data) {
    const ids = linesCsv('token', data.xs, data.idSeries.map((s) => ({ ...s, label: s.label.replace(' ', '_') })));
    return `${ids}\npair,section,theta\n${Array.from(data.groups, (g, i) => `${i},${NAMES[g]},${data.thetas[i]}`).join('\n')}\n`;
  },
  caption: (st) => `mrope section=${st.mropeSection} interleaved=${st.mropeInterleaved} head_dim=${st.dModel} theta=${st.theta} `
    + `text=${st.mropeText} image=${st.mropeT}x${st.mropeH}x${st.mropeW}`,
  cursor0: () => ({ panel: -1, x: 0, y: 0 }),
};
