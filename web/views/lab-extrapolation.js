// The lab's result (chapter "lab"): loss against evaluation length, one line per scheme and per
// RoPE inference scaling, with the entropy floor and T_train; loss against position at one length;
// the numbers as a table; JSON export. (The comparison table's extrapolation column, loss at
// 4 T_train ÷ loss at T_train, comes from the same result: lab.measured(), web/lab.js.)
import { ROPE_SCALINGS, barelyLearned, row, schemeColor, shortCommand } from '../lab.js';
import { fmt } from '../numbers.js';
import { panelsHeight } from '../plot/panels.js';

const PANEL = 300, MIN_WIDTH = 460;
// Evaluation lengths in multiples of T_train (a Map: an object would put the key '1/2' last).
const MULTIPLES = new Map([['1/2', 0.5], ['1', 1], ['2', 2], ['4', 4], ['8', 8]]);
const DASH = { linear: [7, 4], ntk: [2, 3], dynamic: [10, 3, 2, 3], yarn: [4, 2] };
// Shades of RoPE's colour, dark to light, so that the dash is not the only difference.
const SHADE = { linear: '#5e1f4c', ntk: '#8f3b78', dynamic: '#b55a99', yarn: '#eaa6d2' };
const FLOOR_COLOR = '#999999';
const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;');
const num = (v) => (v === null || v === undefined || !Number.isFinite(v) ? NaN : v);

// Lines: the plain model of each scheme, then RoPE with each scaling (from T_train on).
function lengthSeries(r, scalings) {
  const T = r.config.trainLength;
  const lengths = [...MULTIPLES.values()].map((m) => m * T);
  const series = r.results.map((s) => ({
    label: s.scheme, scheme: s.scheme, x: lengths, points: true, color: schemeColor(s.scheme),
    y: lengths.map((L) => { const e = row(r, s.scheme, L); return e && !e.noEmbedding ? num(e.loss) : NaN; }),
    noEmbedding: lengths.filter((L) => row(r, s.scheme, L)?.noEmbedding),
  }));
  if (scalings && r.results.some((s) => s.scheme === 'rope')) {
    for (const k of ROPE_SCALINGS) {
      const xs = lengths.filter((L) => L >= T);
      series.push({ label: `rope + ${k}`, scheme: 'rope', scaling: k, x: xs, points: true, width: 1.2, dash: DASH[k],
        color: SHADE[k], y: xs.map((L) => num((L === T ? row(r, 'rope', L) : row(r, 'rope', L, k))?.loss)) });
    }
  }
  const floor = lengths.map((L) => num(r.floors[L]));
  if (floor.some(Number.isFinite)) {
    series.push({ label: 'entropy floor', x: lengths, y: floor, dash: [4, 4], color: FLOOR_COLOR, width: 1.2 });
  }
  return { lengths, series };
}

function positionSeries(r, L, scalings) {
  const T = r.config.trainLength;
  const series = [], missing = [];
  const add = (label, scheme, e, extra = {}) => {
    if (!e) return;
    if (e.noEmbedding) { missing.push(label); return; }
    const w = e.bucketWidth;
    series.push({ label, scheme, x: e.bucketLoss.map((_, k) => k * w + w / 2), y: e.bucketLoss.map(num),
      color: schemeColor(scheme), ...extra });
  };
  for (const s of r.results) add(s.scheme, s.scheme, row(r, s.scheme, L));
  if (scalings && L > T) {
    for (const k of ROPE_SCALINGS) {
      add(`rope + ${k}`, 'rope', row(r, 'rope', L, k), { dash: DASH[k], width: 1.2, color: SHADE[k] });
    }
  }
  return { series, missing, bucket: series[0]?.x.length ? series[0].x[1] - series[0].x[0] : 0 };
}

// Where the result on show comes from, how to reproduce it, and the way back to the shipped one.
function sourceLine(d) {
  const c = d.r.config, command = `<code>${esc(shortCommand(d.r.command))}</code>`;
  const what = `${esc(d.r.task)}, d_model ${c.dModel}, ${c.nLayers} layers, ${c.nHeads} heads, T_train ${c.trainLength}, `
    + `batch ${c.batch}, ${c.steps} steps, seed ${c.seed}`;
  const text = d.r.source === 'shipped'
    ? `Shown: the shipped result, a real native run (${esc(d.r.simd)}) of ${esc(d.r.date)} (${what}). `
      + `Reproduce it with ${command}.`
    : `Shown: your run in this browser of ${esc(d.r.date)} (${what}; ${d.r.seconds.toFixed(1)} s in WASM workers). `
      + `The same run natively: ${command}.`;
  const back = d.r.source !== 'shipped' && d.shipped
    ? ' <button type="button" data-lab="shipped">Show the shipped result again</button>' : '';
  return `<p class="lab-source">${text}${back}</p>`;
}

// The JSON export and the button back to the shipped result.
function setup(section, host) {
  const { lab } = host;
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
  height: (width) => panelsHeight(2, width, PANEL, MIN_WIDTH),
  compute({ st, lab }) {
    const r = lab.shown();
    if (!r) throw new Error(`${lab.shippedFailure()} Train in the view above to see a result.`);
    const T = r.config.trainLength;
    const L = MULTIPLES.get(st.labAt) * T;
    return { r, T, L, ...lengthSeries(r, st.labScalings), pos: positionSeries(r, L, st.labScalings),
      shipped: Boolean(lab.shipped()), barely: barelyLearned(r) };
  },
  plot: (d, cursor) => {
    // Learned has no number past T_train: said in words at the top of the plot, in its colour.
    const learned = d.series.find((s) => s.scheme === 'learned' && s.noEmbedding.length);
    const texts = learned
      ? [{ x: learned.noEmbedding[0], y: null, label: `learned: no embedding past ${d.T}`, color: learned.color }] : [];
    const missing = d.pos.missing.length ? ` (${d.pos.missing.join(', ')}: no embedding)` : '';
    return {
      kind: 'panels',
      spec: {
        minWidth: MIN_WIDTH, cursor,
        panels: [
          { title: `Loss against evaluation length (${d.r.task})`, kind: 'lines', spec: { series: d.series, xLog: true,
            xTicks: d.lengths, xDomain: [d.lengths[0] / 1.15, d.lengths[d.lengths.length - 1] * 1.15],
            xLabel: 'evaluation length (tokens, log scale)', yLabel: 'mean loss (nats/token)',
            vlines: [{ x: d.T, label: `T_train ${d.T}` }], texts } },
          { title: `Loss by position at length ${d.L}${missing}`, kind: 'lines', spec: {
            series: d.pos.series, xDomain: [0, d.L], xLabel: `position (buckets of ${d.pos.bucket})`, yLabel: 'loss (nats/token)',
            vlines: d.L > d.T ? [{ x: d.T, label: 'T_train' }] : [],
            hlines: d.r.entropyRate === null ? [] : [{ y: d.r.entropyRate, label: `entropy rate ${d.r.entropyRate.toFixed(3)}` }],
          } },
        ],
      },
    };
  },
  move(d, c, key) {
    const n = [d.lengths.length, d.pos.series[0]?.x.length ?? 1];
    let { panel, i } = c;
    const step = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 4, PageDown: -4 }[key] ?? 0;
    if (key === 'Home') i = 0;
    else if (key === 'End') i = n[panel] - 1;
    else i += step;
    if (i >= n[panel] && panel === 0) { panel = 1; i = 0; }
    if (i < 0 && panel === 1) { panel = 0; i = n[0] - 1; }
    return { panel, i: Math.max(0, Math.min(n[panel] - 1, i)) };
  },
  cursor0: () => ({ panel: 0, i: 1 }),
  readout(d, c) {
    if (c.panel === 0) {
      const L = d.lengths[c.i];
      const parts = d.series.map((s) => {
        const k = s.x.indexOf(L);
        if (k < 0) return null;
        if (s.noEmbedding?.includes(L)) return `${s.label} no embedding`;
        return `${s.label} ${fmt(s.y[k], 4)}`;
      }).filter(Boolean);
      return `length ${L}: ${parts.join(', ')}`;
    }
    const s0 = d.pos.series[0];
    if (!s0) return '';
    const w = d.pos.bucket;
    const losses = d.pos.series.map((s) => `${s.label} ${fmt(s.y[c.i], 4)}`).join(', ');
    return `positions ${c.i * w}–${(c.i + 1) * w - 1} at length ${d.L}: ${losses}`;
  },
  note(d) {
    if (!d.barely.length) return '';
    const which = d.barely.map((b) => `${b.scheme} (loss ${b.loss.toFixed(2)} at T_train; `
      + `a blind guess scores ln ${d.r.config.vocabSize} = ${b.guess.toFixed(2)})`).join(', ');
    return `Barely learned: ${which}. A model that did not learn the data cannot show how its positions extrapolate: `
      + 'train longer or use the small model.';
  },
  html(d) {
    const T = d.T, cols = d.lengths;
    const cell = (v) => `<td class="num">${Number.isFinite(v) ? v.toFixed(4) : '–'}</td>`;
    const lines = [];
    lines.push(`<tr><th scope="row">entropy floor</th>${cols.map((L) => cell(num(d.r.floors[L]))).join('')}<td></td></tr>`);
    for (const s of d.series) {
      if (s.label === 'entropy floor') continue;
      const values = cols.map((L) => {
        const k = s.x.indexOf(L);
        if (s.noEmbedding?.includes(L)) return '<td class="num">no emb.</td>';
        return k < 0 ? '<td></td>' : cell(s.y[k]);
      });
      const at = s.y[s.x.indexOf(T)], far = s.noEmbedding?.includes(4 * T) ? NaN : s.y[s.x.indexOf(4 * T)];
      const ratio = s.noEmbedding?.includes(4 * T) ? 'no emb.' : Number.isFinite(far / at) ? (far / at).toFixed(3) : '–';
      lines.push(`<tr data-lab-row="${esc(s.label)}"><th scope="row">${esc(s.label)}</th>${values.join('')}`
        + `<td class="num">${ratio}</td></tr>`);
    }
    const head = `<th scope="col">mean loss (nats)</th>${cols.map((L) => `<th scope="col">L = ${L}</th>`).join('')}`
      + `<th scope="col">loss(${4 * T}) ÷ loss(${T})</th>`;
    return `${sourceLine(d)}
      <table class="lab-table"><thead><tr>${head}</tr></thead><tbody>${lines.join('')}</tbody></table>`;
  },
  csv(d) {
    const out = ['scheme,rope_scaling,length,no_embedding,loss,floor,bucket_start,bucket_width,bucket_loss'];
    for (const s of d.r.results) {
      for (const e of s.eval) {
        const base = [s.scheme, e.ropeScaling, e.length, e.noEmbedding ? 1 : 0, e.loss ?? '', e.floor ?? ''];
        if (e.noEmbedding || !e.bucketLoss.length) out.push([...base, '', '', ''].join(','));
        else e.bucketLoss.forEach((v, k) => out.push([...base, k * e.bucketWidth, e.bucketWidth, v ?? ''].join(',')));
      }
    }
    return `${out.join('\n')}\n`;
  },
  caption(st, { lab }) {
    const r = lab.shown();
    return r ? `lab ${r.task} ${r.source} ${r.date} · ${shortCommand(r.command)}` : 'lab';
  },
};
