// The lesson's comparison table, live: parameter counts for the current settings, where each
// scheme is used (from the presets), and the extrapolation column, the lesson's claim until
// measured results arrive through setMeasuredExtrapolation (chapter "comparison").
import { csvLines } from './common.js';

const ROWS = [
  { scheme: 'sinusoidal', name: 'Sinusoidal', how: 'fixed vector added to the input', relative: 'partly: PE(i)·PE(j) depends on i − j, but the content × position terms do not',
    params: () => ({ formula: 'computed, nothing learned', value: 0 }), claim: 'defined at any position, but quality falls past the training length', usedBy: 'the original Transformer (Vaswani et al. 2017)' },
  { scheme: 'learned', name: 'Learned', how: 'trained vector added to the input', relative: 'no: absolute rows',
    params: (st) => ({ formula: `max_len × d_model = ${st.maxLen} × ${st.dModel}`, value: st.maxLen * st.dModel }), claim: 'none: no row exists past max_len' },
  { scheme: 'rope', name: 'RoPE', how: 'rotates q and k by pos·θᵢ', relative: 'yes: q·k depends only on m − n',
    params: () => ({ formula: '0 (θᵢ fixed)', value: 0 }), claim: 'degrades past L_train unless scaled (NTK, YaRN, llama3)' },
  { scheme: 'alibi', name: 'ALiBi', how: 'adds −slope·distance to scores', relative: 'yes: a function of the distance',
    params: () => ({ formula: '0 (slopes fixed)', value: 0 }), claim: 'good: train short, test long' },
  { scheme: 't5', name: 'T5 bias', how: 'adds a learned bias per bucket', relative: 'yes: a function of the bucketed distance',
    params: (st) => ({ formula: `buckets × heads = ${st.t5Buckets} × ${st.heads}`, value: st.t5Buckets * st.heads }), claim: 'moderate: distances past max distance share the last bucket' },
];

let measured = {}, measuredBy = { source: '', details: {} };

/**
 * Fills the extrapolation column with measured results { scheme: ratio } (from the lab): a ratio,
 * or 'noEmbedding' where the scheme has no number to give (learned past its table). `by`: { source
 * (what was measured, shown under the table), details: { scheme: text beside the ratio } }.
 */
export function setMeasuredExtrapolation(results, by = {}) {
  measured = { ...results };
  measuredBy = { source: by.source ?? '', details: { ...by.details } };
}

function measuredText(m, detail) {
  if (m === 'noEmbedding') return 'the usual claim; measured: no embedding past T_train, so no number';
  if (typeof m !== 'number' || !Number.isFinite(m)) return 'the usual claim (not yet measured)';
  return `the usual claim; measured: ${m.toPrecision(3)}${detail ? ` (${detail})` : ''}`;
}

const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;');

export default {
  id: 'comparison-table',
  title: 'The comparison table, for these settings',
  explain: 'One row per scheme: how position enters, whether scores become relative, how many numbers it adds to train (counted for the d_model, heads and max_len set on this page), which models here use it, and how far past its training length it is said to work — beside what the lab (chapter 9) measured: the loss at 4 × the training length divided by the loss at the training length (1 means no worse; higher is worse).',
  table: true,
  compute({ pe, st }) {
    const rows = ROWS.map((r) => {
      const used = pe.presets.presets.filter((p) => p.scheme === r.scheme).map((p) => p.name);
      const m = measured[r.scheme];
      const value = (typeof m === 'number' && Number.isFinite(m)) || m === 'noEmbedding' ? m : null;
      return { ...r, ...r.params(st), used: used.length ? used.join(', ') : r.usedBy, measured: value, detail: measuredBy.details[r.scheme] ?? '', current: st.attnScheme === r.scheme };
    });
    return { rows, source: Object.keys(measured).length ? measuredBy.source : '' };
  },
  render: (d) => `<table class="comparison"><thead><tr><th scope="col">scheme</th><th scope="col">how position enters</th><th scope="col">relative?</th><th scope="col">parameters</th><th scope="col">used by</th><th scope="col">extrapolation</th></tr></thead><tbody>${
    d.rows.map((r) => `<tr data-scheme="${r.scheme}"${r.current ? ' class="current"' : ''}><th scope="row">${r.name}</th><td data-label="how position enters">${esc(r.how)}</td><td data-label="relative?">${esc(r.relative)}</td><td data-label="parameters"><span class="num">${r.value.toLocaleString('en-US')}</span><br><small>${esc(r.formula)}</small></td><td data-label="used by">${esc(r.used)}</td><td data-label="extrapolation" data-extrapolation>${esc(r.claim)}<br><small>${esc(measuredText(r.measured, r.detail))}</small></td></tr>`).join('')
  }</tbody></table>${d.source ? `<p class="note" data-measured-source>Measured: ${esc(d.source)}</p>` : ''}`,
  csv: (d) => csvLines(['scheme', 'parameters', 'formula', 'used_by', 'extrapolation_claim', 'extrapolation_measured'], d.rows.map((r) => [r.scheme, r.value, r.formula, r.used.replace(/,/g, ';'), r.claim.replace(/,/g, ';'), r.measured ?? ''])),
  caption: (st) => `comparison d_model=${st.dModel} max_len=${st.maxLen} heads=${st.heads} buckets=${st.t5Buckets}`,
};
