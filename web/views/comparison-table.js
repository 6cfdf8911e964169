// The lesson's comparison table, live: parameter counts for the current settings, where each
// scheme is used (from the presets), and the extrapolation column: the lesson's claim, beside what
// the lab measured (lab.measured(), web/lab/lab.js) (chapter "comparison"). The lesson's rows come
// first; the research schemes' rows are in a fold under them.
import { csvLines } from './shared/numbers.js';
import { PAGE_SCHEMES } from './shared/schemes.js';

// The table's rows: the page's schemes that have one (schemes.js, compare), in that order.
const ROWS = PAGE_SCHEMES.filter((s) => s.compare).map((s) => ({ scheme: s.id, name: s.name, ...s.compare }));

function measuredText(m, detail, waiting) {
  if (waiting) return 'the usual claim; the lab\'s measurement is loading';
  if (m === 'noEmbedding') return 'the usual claim; measured: no embedding past T_train, so no number';
  if (typeof m !== 'number' || !Number.isFinite(m)) return 'the usual claim (not yet measured)';
  return `the usual claim; measured: ${m.toPrecision(3)}${detail ? ` (${detail})` : ''}`;
}

const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;');
const COLUMNS = ['scheme', 'how position enters', 'relative?', 'parameters', 'used by', 'extrapolation'];
const USED_SHOWN = 3;  // models named in "used by"; the rest are counted

// "used by": the presets of the scheme, the first few by name.
function usedText(names) {
  if (names.length <= USED_SHOWN + 1) return names.join(', ');
  return `${names.slice(0, USED_SHOWN).join(', ')} and ${names.length - USED_SHOWN} more presets`;
}

function tableRow(r) {
  const cell = (label, html) => `<td data-label="${label}">${html}</td>`;
  return `<tr data-scheme="${r.scheme}"${r.current ? ' class="current"' : ''}><th scope="row">${r.name}</th>`
    + cell('how position enters', esc(r.how)) + cell('relative?', esc(r.relative))
    + cell('parameters', `<span class="num">${r.value.toLocaleString('en-US')}</span><br><small>${esc(r.formula)}</small>`)
    + cell('used by', esc(r.used))
    + `<td data-label="extrapolation" data-extrapolation>${esc(r.claim)}<br>`
    + `<small>${esc(measuredText(r.measured, r.detail, r.waiting))}</small></td>`
    + '</tr>';
}

export default {
  id: 'comparison-table',
  table: true,
  // A new lab result brings new ratios.
  setup: (section, host) => host.lab.onChange((what) => { if (what === 'result') host.refresh('comparison-table'); }),
  compute({ pe, st, lab }) {
    const waiting = !lab.need() && lab.waiting();
    const measured = lab.measured();
    const rows = ROWS.map((r) => {
      const used = usedText(pe.presets.presets.filter((p) => p.scheme === r.scheme).map((p) => p.name));
      const m = measured.ratios[r.scheme];
      const value = (typeof m === 'number' && Number.isFinite(m)) || m === 'noEmbedding' ? m : null;
      return { ...r, ...r.params(st), used: used || r.usedBy, measured: value,
        detail: measured.details[r.scheme] ?? '', current: st.attnScheme === r.scheme, waiting };
    });
    return { rows, source: Object.keys(measured.ratios).length ? measured.source : '' };
  },
  render(d) {
    const table = (rows) => `<table class="comparison"><thead><tr>${COLUMNS.map((c) => `<th scope="col">${c}</th>`).join('')}`
      + `</tr></thead><tbody>${rows.map(tableRow).join('')}</tbody></table>`;
    const research = d.rows.filter((r) => !r.lesson);
    return table(d.rows.filter((r) => r.lesson))
      + (research.length ? `<details class="research" data-keep="research"><summary>${research.length} research schemes `
        + `the lab also trains (beyond the lesson): ${research.map((r) => r.name).join(', ')}</summary>${table(research)}</details>` : '')
      + `${d.source ? `<p class="note" data-measured-source>Measured: ${esc(d.source)}</p>` : ''}`;
  },
  csv: (d) => csvLines(['scheme', 'parameters', 'formula', 'used_by', 'extrapolation_claim', 'extrapolation_measured'],
    d.rows.map((r) => [r.scheme, r.value, r.formula, r.used.replace(/,/g, ';'), r.claim.replace(/,/g, ';'), r.measured ?? ''])),
  caption: (st) => `comparison d_model=${st.dModel} max_len=${st.maxLen} heads=${st.heads} buckets=${st.t5Buckets}`,
};
