// The lesson's comparison table, live: parameter counts for the current settings, where each
// scheme is used (from the presets), and the extrapolation column: the lesson's claim, beside what
// the lab measured (lab.measured(), web/lab.js) (chapter "comparison").
import { csvLines } from '../numbers.js';

const ROWS = [
  { scheme: 'sinusoidal', name: 'Sinusoidal', how: 'fixed vector added to the input',
    relative: 'partly: PE(i)·PE(j) depends on i − j, but the content × position terms do not',
    params: () => ({ formula: 'computed, nothing learned', value: 0 }),
    claim: 'defined at any position, but quality falls past the training length',
    usedBy: 'the original Transformer (Vaswani et al. 2017)' },
  { scheme: 'learned', name: 'Learned', how: 'trained vector added to the input', relative: 'no: absolute rows',
    params: (st) => ({ formula: `max_len × d_model = ${st.maxLen} × ${st.dModel}`, value: st.maxLen * st.dModel }),
    claim: 'none: no row exists past max_len' },
  { scheme: 'rope', name: 'RoPE', how: 'rotates q and k by pos·θᵢ', relative: 'yes: q·k depends only on m − n',
    params: () => ({ formula: '0 (θᵢ fixed)', value: 0 }), claim: 'degrades past L_train unless scaled (NTK, YaRN, llama3)' },
  { scheme: 'alibi', name: 'ALiBi', how: 'adds −slope·distance to scores', relative: 'yes: a function of the distance',
    params: () => ({ formula: '0 (slopes fixed)', value: 0 }), claim: 'good: train short, test long' },
  { scheme: 't5', name: 'T5 bias', how: 'adds a learned bias per bucket', relative: 'yes: a function of the bucketed distance',
    params: (st) => ({ formula: `buckets × heads = ${st.t5Buckets} × ${st.heads}`, value: st.t5Buckets * st.heads }),
    claim: 'moderate: distances past max distance share the last bucket' },
  { scheme: 'xpos', name: 'xPos', how: 'rotates q and k by pos·θᵢ and scales pair i by ζᵢ^(±pos/γ)',
    relative: 'yes: q·k depends only on m − n, and decays with it',
    params: () => ({ formula: '0 (θᵢ, ζᵢ, γ = 512 fixed)', value: 0 }),
    claim: 'better than RoPE past L_train (Sun et al. 2022)',
    usedBy: 'TorchScale (Sun et al. 2022, "A Length-Extrapolatable Transformer")' },
  { scheme: 'kerple_log', name: 'KERPLE (log)', how: 'adds −r₁·log(1 + r₂·distance) to scores, r₁, r₂ learned',
    relative: 'yes: a learned function of the distance',
    params: (st) => ({ formula: `2 × heads = 2 × ${st.heads}`, value: 2 * st.heads }),
    claim: 'better than ALiBi past L_train (Chi et al. 2022)',
    usedBy: 'Chi et al. 2022, "KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation"' },
  { scheme: 'kerple_power', name: 'KERPLE (power)', how: 'adds −r₁·distance^r₂ to scores, 0 < r₂ < 2, learned',
    relative: 'yes: a learned function of the distance',
    params: (st) => ({ formula: `2 × heads = 2 × ${st.heads}`, value: 2 * st.heads }),
    claim: 'close to the log variant (Chi et al. 2022)',
    usedBy: 'Chi et al. 2022' },
  { scheme: 'fire', name: 'FIRE', how: 'adds an MLP of the distance over log(1 + c·max(L, i)) to scores',
    relative: 'yes, progressively: a learned function of the distance, scaled to [0, 1] per query',
    params: (st) => ({ formula: `per layer: 32 × (heads + 2) + 2 = 32 × ${st.heads + 2} + 2`, value: 32 * (st.heads + 2) + 2 }),
    claim: 'claimed better past L_train than T5, ALiBi and KERPLE (Li et al. 2023)',
    usedBy: 'Li et al. 2023, "Functional Interpolation for Relative Positions Improves Long Context Transformers"' },
  { scheme: 'cope', name: 'CoPE', how: 'adds q·e[p] to scores, p = Σ σ(q·k) counted back from the query',
    relative: 'yes, by content: p counts the keys the gates open, not the tokens',
    params: (st) => ({ formula: `per layer: (P + 1) × d_model = 65 × ${st.dModel} (P = 64, the lab's T_train)`,
      value: 65 * st.dModel }),
    claim: 'claimed to count and copy where RoPE fails, and to extrapolate (Golovneva et al. 2024)',
    usedBy: 'Golovneva et al. 2024, "Contextual Position Encoding: Learning to Count What\'s Important"' },
];

function measuredText(m, detail) {
  if (m === 'noEmbedding') return 'the usual claim; measured: no embedding past T_train, so no number';
  if (typeof m !== 'number' || !Number.isFinite(m)) return 'the usual claim (not yet measured)';
  return `the usual claim; measured: ${m.toPrecision(3)}${detail ? ` (${detail})` : ''}`;
}

const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;');
const COLUMNS = ['scheme', 'how position enters', 'relative?', 'parameters', 'used by', 'extrapolation'];

function tableRow(r) {
  const cell = (label, html) => `<td data-label="${label}">${html}</td>`;
  return `<tr data-scheme="${r.scheme}"${r.current ? ' class="current"' : ''}><th scope="row">${r.name}</th>`
    + cell('how position enters', esc(r.how)) + cell('relative?', esc(r.relative))
    + cell('parameters', `<span class="num">${r.value.toLocaleString('en-US')}</span><br><small>${esc(r.formula)}</small>`)
    + cell('used by', esc(r.used))
    + `<td data-label="extrapolation" data-extrapolation>${esc(r.claim)}<br>`
    + `<small>${esc(measuredText(r.measured, r.detail))}</small></td>`
    + '</tr>';
}

export default {
  id: 'comparison-table',
  table: true,
  // A new lab result brings new ratios.
  setup: (section, host) => host.lab.onChange((what) => { if (what === 'result') host.refresh('comparison-table'); }),
  compute({ pe, st, lab }) {
    const measured = lab.measured();
    const rows = ROWS.map((r) => {
      const used = pe.presets.presets.filter((p) => p.scheme === r.scheme).map((p) => p.name);
      const m = measured.ratios[r.scheme];
      const value = (typeof m === 'number' && Number.isFinite(m)) || m === 'noEmbedding' ? m : null;
      return { ...r, ...r.params(st), used: used.length ? used.join(', ') : r.usedBy, measured: value,
        detail: measured.details[r.scheme] ?? '', current: st.attnScheme === r.scheme };
    });
    return { rows, source: Object.keys(measured.ratios).length ? measured.source : '' };
  },
  render: (d) => `<table class="comparison"><thead><tr>${COLUMNS.map((c) => `<th scope="col">${c}</th>`).join('')}</tr></thead>`
    + `<tbody>${d.rows.map(tableRow).join('')}</tbody></table>`
    + `${d.source ? `<p class="note" data-measured-source>Measured: ${esc(d.source)}</p>` : ''}`,
  csv: (d) => csvLines(['scheme', 'parameters', 'formula', 'used_by', 'extrapolation_claim', 'extrapolation_measured'],
    d.rows.map((r) => [r.scheme, r.value, r.formula, r.used.replace(/,/g, ';'), r.claim.replace(/,/g, ';'), r.measured ?? ''])),
  caption: (st) => `comparison d_model=${st.dModel} max_len=${st.maxLen} heads=${st.heads} buckets=${st.t5Buckets}`,
};
