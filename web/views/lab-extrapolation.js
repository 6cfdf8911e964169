// The lab's result (chapter "lab"): loss against evaluation length, one line per scheme and per
// RoPE inference scaling (with several seeds their mean, shaded from the least to the greatest),
// with the entropy floor and T_train; loss against position at one length; a legend of buttons,
// grouped by family, that hide and show series; the numbers as a table; JSON export. (The
// comparison table's extrapolation column, loss at 4 T_train ÷ loss at T_train, comes from the
// same result: lab.measured(), web/lab/lab.js.)
import { moveLinePanelGrid } from '../plot/cursor.js';
import { markerSvg } from '../plot/markers.js';
import { scrollTable } from './shared/html.js';
import { LabLoading, addedText, barelyLearned, rows, scalingsIn, schemesIn, seedsText, shortCommand } from '../lab/lab.js';
import { fmt } from './shared/numbers.js';
import { panelsHeight } from '../plot/panels.js';
import { legibleOn } from '../plot/legible.js';

const PANEL = 300, MIN_WIDTH = 460;
// Evaluation lengths in multiples of T_train (a Map: an object would put the key '1/2' last).
const MULTIPLES = new Map([['1/2', 0.5], ['1', 1], ['2', 2], ['4', 4], ['8', 8]]);
const DASH = { linear: [7, 4], ntk: [2, 3], dynamic: [10, 3, 2, 3], yarn: [4, 2] };
// RoPE's scalings: pinks and purples within 30° of RoPE's own hue (in CIELAB), so that the dash is
// not the only difference. Each has 3 : 1 against both themes' backgrounds as it is, and is at least
// 12 apart (CIEDE2000) from the 16 series colours as drawn and at least 20 from the others here
// (tests/browser/contrast.test.mjs).
export const SCALING_COLORS = { linear: '#886688', ntk: '#9900ee', dynamic: '#dd0055', yarn: '#ff44cc' };
const FLOOR_COLOR = '#999999';
// The legend's groups: how each family brings positions in (the comparison chapter's stages), by
// the series' scheme (RoPE's scalings with RoPE); a scheme in none of them gets a group "other".
const GROUPS = [
  ['none / absolute', ['none', 'sinusoidal', 'learned']],
  ['rotary', ['rope', 'xpos', 'p_rope']],
  ['bias', ['alibi']],
  ['learned bias', ['t5', 'kerple_log', 'kerple_power', 'fire']],
  ['contextual', ['cope']],
  ['mixed layers', ['irope', 'nope_interval', 'gemma3', 'swa_rope_nope']],
];
// A series' group and its place there: { group, rank } (the entropy floor has no scheme).
const PLACES = new Map(GROUPS.flatMap(([group, members]) => members.map((m, rank) => [m, { group, rank }])));
const placeOf = (s) => (s.scheme ? PLACES.get(s.scheme) ?? { group: 'other', rank: 0 } : { group: 'reference', rank: 0 });
const GROUP_ORDER = [...GROUPS.map(([name]) => name), 'other', 'reference'];
const SVG = 'http://www.w3.org/2000/svg';
const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;');
const num = (v) => (v === null || v === undefined || !Number.isFinite(v) ? NaN : v);

// Mean, least and greatest of one value per seed (NaN unless every seed has it).
function spread(values) {
  if (!values.length || !values.every(Number.isFinite)) return { mean: NaN, lo: NaN, hi: NaN };
  return { mean: values.reduce((a, b) => a + b, 0) / values.length, lo: Math.min(...values), hi: Math.max(...values) };
}

// A series from per-seed values at each x: y the mean, `band` the min–max when there are several seeds.
function seedSeries(x, perSeed, n, extra) {
  const st = perSeed.map(spread);
  return { x, y: st.map((v) => v.mean), perSeed, band: n > 1 ? { lo: st.map((v) => v.lo), hi: st.map((v) => v.hi) } : null,
    ...extra };
}

// Lines: the plain model of each scheme, then RoPE with each scaling (from T_train on).
function lengthSeries(r, scalings, n, lab) {
  const T = r.config.trainLength;
  const lengths = [...MULTIPLES.values()].map((m) => m * T);
  const losses = (scheme, L, scaling) => rows(r, scheme, L, scaling).map((e) => (e.noEmbedding ? NaN : num(e.loss)));
  const series = schemesIn(r).map((scheme) => seedSeries(lengths, lengths.map((L) => losses(scheme, L)), n, {
    label: scheme, scheme, points: true, color: lab.color(scheme), marker: lab.marker(scheme),
    noEmbedding: lengths.filter((L) => rows(r, scheme, L)[0]?.noEmbedding) }));
  if (scalings && schemesIn(r).includes('rope')) {
    for (const k of scalingsIn(r)) {
      const xs = lengths.filter((L) => L >= T);
      series.push(seedSeries(xs, xs.map((L) => losses('rope', L, L === T ? 'none' : k)), n, {
        label: `rope + ${k}`, scheme: 'rope', scaling: k, points: true, width: 1.2, dash: DASH[k], color: SCALING_COLORS[k] }));
    }
  }
  const floor = lengths.map((L) => num(r.floors[L]));
  if (floor.some(Number.isFinite)) {
    series.push({ label: 'entropy floor', x: lengths, y: floor, dash: [4, 4], color: FLOOR_COLOR, width: 1.2 });
  }
  return { lengths, series };
}

function positionSeries(r, L, scalings, n, lab) {
  const T = r.config.trainLength;
  const series = [], missing = [];
  const add = (label, scheme, es, extra = {}) => {
    if (!es.length) return;
    if (es[0].noEmbedding) { missing.push(label); return; }
    const w = es[0].bucketWidth;
    const x = es[0].bucketLoss.map((_, k) => k * w + w / 2);
    series.push(seedSeries(x, x.map((_, k) => es.map((e) => num(e.bucketLoss[k]))), n,
      { label, scheme, color: lab.color(scheme), ...extra }));
  };
  for (const scheme of schemesIn(r)) add(scheme, scheme, rows(r, scheme, L));
  if (scalings && L > T) {
    for (const k of scalingsIn(r)) {
      add(`rope + ${k}`, 'rope', rows(r, 'rope', L, k), { dash: DASH[k], width: 1.2, color: SCALING_COLORS[k] });
    }
  }
  return { series, missing, bucket: series[0]?.x.length ? series[0].x[1] - series[0].x[0] : 0 };
}

// The text task in words: which file, and what its numbers are not (docs/lab.md, "The tasks").
const SHIPPED_TEXT = 'data/kjv-genesis-joshua.txt';
function textNote(file) {
  const what = file === SHIPPED_TEXT
    ? `English: the King James Bible, Genesis to Joshua (${SHIPPED_TEXT}, 915,234 bytes, public domain)`
    : `the file ${file ?? 'chosen'}`;
  return `text is character level: one token per distinct byte of ${what}, each row a window of it at a random `
    + 'offset. It has no floor (the least possible loss of the text is unknown) and no held-out split: training '
    + 'batches and evaluation rows are windows of the same file, so the plot measures extrapolation in length, not '
    + 'generalisation to unseen text.';
}

// A hidden series keeps its place (series 0 carries the cursor's x) but draws nothing.
const shownOnly = (series, hidden) => series.map((s) => (hidden.has(s.label)
  ? { ...s, label: '', y: s.y.map(() => NaN), band: null } : s));

// A value for the read-out and the table: the mean, and with several seeds their least and greatest.
function valueText(s, k) {
  if (!s.band) return fmt(s.y[k], 4);
  return `${fmt(s.y[k], 4)} (${fmt(s.band.lo[k], 4)}–${fmt(s.band.hi[k], 4)})`;
}

// Where the result on show comes from, how to reproduce it, and the way back to the shipped one.
function sourceLine(d) {
  const c = d.r.config, command = `<code>${esc(shortCommand(d.r.command))}</code>`;
  const what = `${esc(d.r.task)}, d_model ${c.dModel}, ${c.nLayers} layers, ${c.nHeads} heads, T_train ${c.trainLength}, `
    + `batch ${c.batch}, ${c.steps} steps, ${seedsText(c)}`;
  const text = d.r.source === 'shipped'
    ? `Shown: the shipped result, a real native run (${esc(d.r.simd)}) of ${esc(d.r.date)} (${what}). `
      + `Reproduce it with ${command}${addedText(d.r, (x) => `<code>${esc(x)}</code>`, esc)}.`
    : `Shown: your run in this browser of ${esc(d.r.date)} (${what}; ${d.r.seconds.toFixed(1)} s in WASM workers). `
      + `The same run natively: ${command}.`;
  const back = d.r.source !== 'shipped' && d.shipped
    ? ' <button type="button" data-lab="shipped">Show the shipped result again</button>' : '';
  return `<p class="lab-source">${text}${back}</p>`;
}

// The legend: one button per series, in its family's group; pressing one hides or shows the
// series (labHide). Made again only when the result's series change, so focus stays on the button.
function legendBox(host) {
  const box = document.createElement('div');
  box.className = 'lab-legend';
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', 'Series of the plots: press one to hide or show it');
  box.addEventListener('click', (e) => {
    const b = e.target.closest('button[data-series]');
    if (!b) return;
    const hidden = new Set(host.state().labHide.split(',').filter(Boolean));
    if (hidden.has(b.dataset.series)) hidden.delete(b.dataset.series); else hidden.add(b.dataset.series);
    host.onChange('labHide', [...hidden].join(','), true);
  });
  const update = (d) => {
    box.hidden = !d;
    if (!d) return;
    const labels = d.series.map((s) => s.label);
    if (box.dataset.labels !== labels.join()) {
      box.dataset.labels = labels.join();
      // Within a group in its members' order (RoPE's scalings right after RoPE: a stable sort
      // keeps the plot's order among equals).
      box.replaceChildren(...GROUP_ORDER.map((name) => [name, d.series.filter((s) => placeOf(s).group === name)
        .sort((a, b) => placeOf(a).rank - placeOf(b).rank)])
        .filter(([, series]) => series.length).map(([name, series]) => legendGroup(name, series)));
    }
    // Each swatch in its series' colour as the plot draws it on this theme.
    const drawn = legibleOn(box), color = new Map(d.series.map((s) => [s.label, s.color]));
    for (const b of box.querySelectorAll('button')) {
      b.setAttribute('aria-pressed', String(!d.hidden.has(b.dataset.series)));
      for (const paint of ['stroke', 'fill']) b.firstChild.setAttribute(paint, drawn(color.get(b.dataset.series)));
    }
  };
  return { box, update };
}

// A short line drawn with the series' dashes and, if it has one, its marker (SVG attributes: the
// CSP forbids style attributes; the colour is set on the svg, which both inherit).
function swatch({ dash, marker }) {
  const svg = document.createElementNS(SVG, 'svg'), line = document.createElementNS(SVG, 'line');
  const attrs = (el, a) => { for (const [k, v] of Object.entries(a)) el.setAttribute(k, v); };
  attrs(svg, { class: 'swatch', width: 22, height: 10, 'aria-hidden': 'true' });
  attrs(line, { x1: 0, y1: 5, x2: 22, y2: 5, 'stroke-width': 3, ...(dash && { 'stroke-dasharray': dash.join(' ') }) });
  svg.append(line);
  if (marker) {
    const dot = document.createElementNS(SVG, 'path');
    attrs(dot, { d: markerSvg(marker.shape, 11, 5, 4), 'stroke-width': 1.5, 'data-marker': `${marker.shape}${marker.open ? ' open' : ''}`,
      ...(marker.open ? { fill: 'none' } : { stroke: 'none' }) });
    svg.append(dot);
  }
  return svg;
}

function legendGroup(name, series) {
  const group = document.createElement('div');
  group.className = 'group';
  group.setAttribute('role', 'group');
  group.setAttribute('aria-label', name);
  group.innerHTML = `<span class="group-name" aria-hidden="true">${esc(name)}</span>`;
  for (const s of series) {
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.series = s.label;
    b.append(swatch(s), s.label);
    group.append(b);
  }
  return group;
}

// The legend, the JSON export and the button back to the shipped result.
function setup(section, host) {
  const { lab } = host;
  const legend = legendBox(host);
  section.querySelector('figure').before(legend.box);
  section.legend = legend;
  const actions = section.querySelector('.actions');
  const json = document.createElement('button');
  json.type = 'button';
  json.dataset.labExport = 'json';
  json.textContent = 'JSON';
  actions.querySelector('[data-export="csv"]').after(json);
  json.addEventListener('click', () => {
    const r = lab.shown();
    if (!r) return;
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([`${JSON.stringify(r, null, 1)}\n`], { type: 'application/json' }));
    a.download = `posenc-lab-${r.source}.json`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  });
  section.addEventListener('click', (e) => { if (e.target.dataset?.lab === 'shipped') lab.showShipped(); });
  lab.onChange((what) => { if (what === 'result') host.refresh('lab-extrapolation'); });
}

export default {
  id: 'lab-extrapolation',
  controls: [
    ['labAt', { kind: 'select', label: 'loss by position at length (× T_train)' }],
    ['labScalings', { kind: 'checkbox' }],
  ],
  setup,
  rendered: (d, section) => section.legend.update(d),
  height: (width) => panelsHeight(2, width, PANEL, MIN_WIDTH),
  compute({ st, lab }) {
    lab.need();
    const r = lab.shown();
    if (!r && lab.waiting()) throw new LabLoading();
    if (!r) throw new Error(`${lab.shippedFailure()} Train in the view above to see a result.`);
    const T = r.config.trainLength, n = r.config.seeds ?? 1;
    const L = MULTIPLES.get(st.labAt) * T;
    return { r, T, L, n, ...lengthSeries(r, st.labScalings, n, lab), pos: positionSeries(r, L, st.labScalings, n, lab),
      hidden: new Set(st.labHide.split(',').filter(Boolean)), shipped: Boolean(lab.shipped()), barely: barelyLearned(r) };
  },
  plot: (d, cursor, width, { exporting = false } = {}) => {
    // Learned has no number past T_train: said in the left plot's note line (text in the plot lay
    // over the other schemes' curves and bands there).
    const learned = d.series.some((s) => s.scheme === 'learned' && s.noEmbedding.length && !d.hidden.has(s.label));
    const missing = d.pos.missing.length ? ` (${d.pos.missing.join(', ')}: no embedding)` : '';
    // On the page the legend is the buttons above the plot; the PNG draws its own.
    const legend = exporting ? undefined : false;
    const how = [d.n > 1 ? `${d.n} seeds: mean, band min–max` : '',
      d.r.config.randomPositions ? `trained at random positions < ${d.r.config.randomPositions}` : ''];
    // What a label in the plot would say, said in the note line above it: the curves run along the
    // floor and past T_train, so a label there lay over them.
    const rate = d.r.entropyRate;
    const noteOf = (...more) => [...how, ...more].filter(Boolean).join(' · ') || undefined;
    return {
      kind: 'panels',
      spec: {
        minWidth: MIN_WIDTH, cursor,
        panels: [
          { title: `Loss against evaluation length (${d.r.task})`, kind: 'lines', spec: { series: shownOnly(d.series, d.hidden),
            xTicks: d.lengths, xDomain: [d.lengths[0] / 1.15, d.lengths[d.lengths.length - 1] * 1.15], xLog: true, legend,
            note: noteOf(learned && `learned: no embedding past ${d.T}`), xLabel: 'evaluation length (tokens, log scale)', yLabel: 'mean loss (nats/token)',
            vlines: [{ x: d.T, label: `T_train ${d.T}` }] } },
          { title: `Loss by position at length ${d.L}${missing}`, kind: 'lines', spec: { legend,
            note: noteOf(rate !== null && `the line at the bottom: entropy rate ${rate.toFixed(3)}`),
            series: shownOnly(d.pos.series, d.hidden), xDomain: [0, d.L], xLabel: `position (buckets of ${d.pos.bucket})`,
            yLabel: 'loss (nats/token)',
            vlines: d.L > d.T ? [{ x: d.T, label: 'T_train' }] : [],
            hlines: rate === null ? [] : [{ y: rate, label: '' }],
          } },
        ],
      },
    };
  },
  move: (d, c, key, layout) => moveLinePanelGrid(c, [d.lengths.length, d.pos.series[0]?.x.length ?? 1], key, layout),
  cursor0: () => ({ panel: 0, i: 1 }),
  readout(d, c) {
    const of = d.n > 1 ? `, mean (min–max) of ${d.n} seeds` : '';
    if (c.panel === 0) {
      const L = d.lengths[c.i];
      const parts = d.series.filter((s) => !d.hidden.has(s.label)).map((s) => {
        const k = s.x.indexOf(L);
        if (k < 0) return null;
        if (s.noEmbedding?.includes(L)) return `${s.label} no embedding`;
        return `${s.label} ${valueText(s, k)}`;
      }).filter(Boolean);
      return `length ${L}${of}: ${parts.join(', ')}`;
    }
    const s0 = d.pos.series[0];
    if (!s0) return '';
    const w = d.pos.bucket;
    const losses = d.pos.series.filter((s) => !d.hidden.has(s.label)).map((s) => `${s.label} ${valueText(s, c.i)}`).join(', ');
    return `positions ${c.i * w}–${(c.i + 1) * w - 1} at length ${d.L}${of}: ${losses}`;
  },
  note(d) {
    const guess = (b) => `a blind guess scores ln ${d.r.config.vocabSize} = ${b.guess.toFixed(2)}`;
    const none = d.barely.find((b) => b.scheme === 'none'), others = d.barely.filter((b) => b.scheme !== 'none');
    const parts = [];
    if (d.r.task === 'text') parts.push(textNote(/--text (\S+)/.exec(d.r.command ?? '')?.[1]));
    if (others.length) {
      const which = others.map((b) => `${b.scheme} (loss ${b.loss.toFixed(2)} at T_train; ${guess(b)})`).join(', ');
      parts.push(`Barely learned: ${which}. A model that did not learn the data cannot show how its positions `
        + 'extrapolate: train longer or use the small model.');
    }
    // NoPE has no position signal but the causal mask: its line is the reference, not a failed run.
    if (none) {
      parts.push(`none (NoPE) is at ${none.loss.toFixed(2)} at T_train (${guess(none)}): without positions it has only `
        + 'the causal mask to tell order by, and here it did not learn the order-dependent statistics — the line for '
        + '“no position at all” that the others are read against.');
    }
    return parts.join(' ');
  },
  html(d) {
    if (!d) return '';  // the lab's result is not in yet
    const T = d.T, cols = d.lengths;
    const cell = (v) => `<td class="num">${Number.isFinite(v) ? v.toFixed(4) : '–'}</td>`;
    // With several seeds: the mean, and under it the least and greatest.
    const spreadCell = (v, digits) => (Number.isFinite(v.mean) ? `<td class="num">${v.mean.toFixed(digits)}`
      + `${d.n > 1 ? `<span class="range">${v.lo.toFixed(digits)}–${v.hi.toFixed(digits)}</span>` : ''}</td>` : '<td class="num">–</td>');
    const lines = [];
    lines.push(`<tr><th scope="row">entropy floor</th>${cols.map((L) => cell(num(d.r.floors[L]))).join('')}<td></td></tr>`);
    for (const s of d.series) {
      if (s.label === 'entropy floor') continue;
      const values = cols.map((L) => {
        const k = s.x.indexOf(L);
        if (s.noEmbedding?.includes(L)) return '<td class="num">no emb.</td>';
        return k < 0 ? '<td></td>' : spreadCell(spread(s.perSeed[k]), 4);
      });
      // The ratio per seed, then its mean (as the CLI's table takes it).
      const at = s.perSeed[s.x.indexOf(T)], far = s.perSeed[s.x.indexOf(4 * T)];
      const ratio = s.noEmbedding?.includes(4 * T) ? '<td class="num">no emb.</td>'
        : spreadCell(spread(far.map((v, k) => v / at[k])), 3);
      lines.push(`<tr data-lab-row="${esc(s.label)}"><th scope="row">${esc(s.label)}</th>${values.join('')}${ratio}</tr>`);
    }
    const of = d.n > 1 ? `, mean and min–max of ${d.n} seeds` : '';
    const head = `<th scope="col">loss (nats${of})</th>${cols.map((L) => `<th scope="col">L = ${L}</th>`).join('')}`
      + `<th scope="col">loss(${4 * T}) ÷ loss(${T})</th>`;
    return `${sourceLine(d)}<details class="numbers" data-keep="numbers"><summary>The numbers: loss at every length, `
      + `${d.n > 1 ? 'mean and min–max of the seeds' : 'one seed'}</summary>`
      + `${scrollTable(`<table class="lab-table"><thead><tr>${head}</tr></thead><tbody>${lines.join('')}</tbody></table>`,
        'the lab\'s loss at every length')}`
      + '</details>';
  },
  csv(d) {
    const out = ['scheme,rope_scaling,length,no_embedding,loss,floor,bucket_start,bucket_width,bucket_loss,seed'];
    for (const s of d.r.results) {
      for (const e of s.eval) {
        const base = [s.scheme, e.ropeScaling, e.length, e.noEmbedding ? 1 : 0, e.loss ?? '', e.floor ?? ''];
        if (e.noEmbedding || !e.bucketLoss.length) out.push([...base, '', '', '', s.seed].join(','));
        else e.bucketLoss.forEach((v, k) => out.push([...base, k * e.bucketWidth, e.bucketWidth, v ?? '', s.seed].join(',')));
      }
    }
    return `${out.join('\n')}\n`;
  },
  caption(st, { lab }) {
    const r = lab.shown();
    if (!r) return 'lab';
    const n = r.config.seeds ?? 1, random = r.config.randomPositions;
    return `lab ${r.task} ${r.source} ${r.date} · ${n} seed${n > 1 ? 's' : ''}`
      + `${random ? ` · randomized positions (L_max ${random})` : ''} · ${shortCommand(r.command)}`;
  },
};
