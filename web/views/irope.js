// Llama 4's iRoPE: the NoPE layers' attention temperature against position (chapter "long-context").
import { SERIES } from '../plot/colormap.js';
import { linesCsv } from '../plot/lines.js';
import { FIELDS } from '../settings/state.js';
import { fmt, nth } from './shared/numbers.js';

const SAMPLES = 1200;
const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const ordinal = (k) => (k === 1 ? 'layer' : nth(k));

/** Layer numbers, a long regular run shortened: 3, 7, 11, … 47. */
function listLayers(ls) {
  const step = ls.length > 1 ? ls[1] - ls[0] : 0;
  const regular = ls.length >= 5 && ls.every((l, i) => l === ls[0] + i * step);
  return regular ? `${ls[0]}, ${ls[1]}, ${ls[2]}, … ${ls[ls.length - 1]}` : ls.join(', ');
}

/** k when the NoPE layers are exactly every k-th ((l + 1) % k == 0, HF's rule), else 0. */
function everyKth(rope) {
  const first = rope.indexOf(false);
  if (first < 0) return 0;
  const k = first + 1;
  return rope.every((r, l) => r === ((l + 1) % k !== 0)) ? k : 0;
}

/**
 * Which layers of the model on the page are NoPE, in words, from readModel's irope
 * (extras.irope, web/settings/settings.js): { text, rope } (rope: per layer, true = RoPE; null when unknown).
 */
function nopeLayers(irope, st) {
  if (!irope) {
    // The settings' defaults are Llama-4-Scout's (web/settings/state.js).
    const [floor, attn] = [FIELDS.iropeFloor.value, FIELDS.iropeAttn.value];
    const whose = st.iropeFloor === floor && st.iropeAttn === attn ? `Llama-4-Scout's floor_scale (${floor}) and attn_scale (${attn})`
      : `the floor_scale and attn_scale set here (Llama-4-Scout's are ${floor} and ${attn})`;
    return { rope: null, text: `No model chosen: the curve uses ${whose}. `
      + 'Choose Llama-4-Scout in the settings (model), or paste or open a Llama 4 config.json, '
      + 'to see which of its layers are NoPE.' };
  }
  const model = esc(irope.model);
  const info = irope.info;
  if (!info) {
    return { rope: null, text: `${model} has no NoPE layers that readModel can see (no Llama 4 keys such as attention_chunk_size `
      + 'or no_rope_layers): the curve uses the floor_scale and attn_scale set here.' };
  }
  const rope = info.ropeLayers ?? [];
  const n = rope.length;
  if (!n) {
    return { rope: null, text: `${model}: readModel found Llama 4's keys but no layer count (num_hidden_layers), `
      + 'so it cannot say which layers are NoPE.' };
  }
  const nope = rope.flatMap((r, l) => (r ? [] : [l]));
  const chunks = info.chunkSize ? `, attending only within chunks of ${info.chunkSize} tokens (attention_chunk_size)` : '';
  if (!nope.length) {
    return { rope, text: `${model}: all ${n} layers use RoPE${chunks}; no_rope_layers marks none NoPE, `
      + 'so no layer takes the temperature.' };
  }
  const k = everyKth(rope);
  const every = k ? `every ${ordinal(k)}` : '';
  const hfDefault = irope.interval !== undefined ? `HF's default (no_rope_layer_interval ${irope.interval})` : 'HF\'s default';
  const why = {
    empty: `${hfDefault} for an empty no_rope_layers`,
    absent: `${hfDefault} for a config without no_rope_layers`,
    list: 'as the config\'s no_rope_layers lists them (0 = NoPE)',
  }[irope.given] ?? 'as readModel reads the file';
  const how = info.temperatureTuning ? 'no positions, temperature-scaled queries'
    : 'no positions; attn_temperature_tuning is off, so no temperature';
  return { rope, text: `${model} has ${n} layers, counted from 0. <strong>NoPE layers (${how}): ${listLayers(nope)}</strong> — `
    + `${[every, why].filter(Boolean).join(', ')}. The other ${n - nope.length} use RoPE${chunks}.` };
}

/** A strip of the model's layers, NoPE ones marked (decorative: the sentence says it all). */
function layerStrip(rope) {
  if (!rope) return '';
  const cells = rope.map((r, l) => `<span class="${r ? 'rope' : 'nope'}" title="layer ${l}: ${r ? 'RoPE' : 'NoPE'}"></span>`);
  const legend = '<span class="layer-legend"><span class="rope"></span> RoPE <span class="nope"></span> NoPE</span>';
  return `<div class="layer-strip" aria-hidden="true"><span class="layer-cells">${cells.join('')}</span>${legend}</div>`;
}

export default {
  id: 'irope',
  controls: [
    ['iropeFloor', { label: 'floor_scale', slider: { min: 16, max: 65536, log: true } }],
    ['iropeAttn', { label: 'attn_scale', slider: { min: 0.01, max: 1, log: true } }],
    ['iropeSpan', { label: 'positions up to × floor_scale', slider: { min: 2, max: 1024, log: true } }],
  ],
  compute({ pe, st }) {
    const last = st.iropeFloor * st.iropeSpan;
    // Log-spaced integer positions, with both sides of every step while there are few.
    const set = new Set();
    for (let k = 0; k < SAMPLES; k++) set.add(Math.round(last ** (k / (SAMPLES - 1))));
    if (st.iropeSpan <= 256) {
      for (let m = 1; m <= st.iropeSpan; m++) { set.add(m * st.iropeFloor - 2); set.add(m * st.iropeFloor - 1); }
    }
    const xs = Float64Array.from([...set].filter((p) => p >= 1 && p <= last).sort((a, b) => a - b));
    const scale = pe.iropeScale(xs, { floorScale: st.iropeFloor, attnScale: st.iropeAttn });
    const ratio = Float64Array.from(scale, (s) => Math.exp(s));
    const at = (p) => pe.iropeScale(p, { floorScale: st.iropeFloor, attnScale: st.iropeAttn });
    return { xs, last, floor: st.iropeFloor, attn: st.iropeAttn, at, series: [
      { label: 'query multiplier (NoPE layers)', x: xs, y: scale, color: SERIES[0], step: true, width: 2.4 },
      { label: 'weight ratio for a score gap of 1 (right axis)', x: xs, y: ratio, color: SERIES[1], axis: 2, step: true,
        dash: [5, 3] },
    ] };
  },
  plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, xLog: true, xLabel: 'position p (log)',
    yLabel: 'multiplier on q', y2Label: 'e^multiplier', cursor,
    vlines: [{ x: d.floor, label: `floor_scale ${d.floor}`, color: SERIES[3] }],
    hlines: [{ y: 1, label: 'RoPE layers: 1 (no temperature)' }] } }),
  note(d) {
    // At floor_scale 1 no position comes before the first step.
    const before = d.floor > 1 ? `Multiplier at position ${d.floor - 2}: ${fmt(d.at(d.floor - 2), 4)}; at` : 'Multiplier at position';
    return `${before} ${d.floor - 1} (where (p + 1) / floor_scale reaches 1): ${fmt(d.at(d.floor - 1), 4)}; `
      + `at ${d.last}: ${fmt(d.at(d.last), 4)} (attn_scale ${d.attn}).`;
  },
  readout: (d, c) => `position ${d.xs[c.i]}: q × ${fmt(d.series[0].y[c.i], 5)}; `
    + `a score gap of 1 becomes a weight ratio of ${fmt(d.series[1].y[c.i], 4)}`,
  csv: (d) => linesCsv('position', d.xs, d.series),
  caption: (st) => `irope temperature floor_scale=${st.iropeFloor} attn_scale=${st.iropeAttn} `
    + `up to ${st.iropeFloor * st.iropeSpan}`,
  cursor0: (d) => ({ i: d.xs.length - 1 }),
  // Which layers this applies to in the model on the page (shown whether or not the plot is drawn).
  html(d, { extras, st }) {
    const { text, rope } = nopeLayers(extras.irope, st);
    return `<p class="irope-layers" data-irope-layers>${text}</p>${layerStrip(rope)}`;
  },
};
