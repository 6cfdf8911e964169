// "dog bites man" vs "man bites dog": without positions the two attention maps are one map with
// rows and columns permuted; each scheme breaks that (chapter "order").
import { DIVERGING, SEQUENTIAL } from '../plot/colormap.js';
import { panelsHeight } from '../plot/panels.js';
import { pageScheme, PAGE_SCHEMES } from './shared/schemes.js';
import { ATTENTION_SCHEMES } from '../settings/state.js';
import { movePanels } from '../plot/cursor.js';
import { csvLines, fmt } from './shared/numbers.js';
import { seededVectors } from './shared/vectors.js';

const WORDS = ['dog', 'bites', 'man'];
const SENTENCES = [[0, 1, 2], [2, 1, 0]];
const PERM = [2, 1, 0];  // where each word of sentence 1 sits in sentence 2
const PANEL = 190, MIN_WIDTH = 170;
const label = (scheme) => pageScheme(scheme).label;
const CHOICES = Object.fromEntries(PAGE_SCHEMES.filter((s) => s.menu).map((s) => [s.id, s.menu]));

// The scheme's positions (schemes.js, order): a table added to the tokens, or pe.attention options.
function weightsFor(pe, st, scheme, tokens, d) {
  const { order } = pageScheme(scheme);
  const tokenEmbeddings = seededVectors(pe, 3, d, 7, 0.5);
  const positionTable = order.table ? order.table(pe, st, d) : new Float32Array(3 * d);
  const x = pe.embed(tokens, { tokenEmbeddings, dModel: d, positionTable, scale: 1 });
  const options = { nHeads: 1, headDim: d, returnWeights: true, causal: st.attnCausal, ...order.options?.(pe, st, d) };
  return pe.attention(x, x, x, options).weights;
}

export default {
  id: 'attention',
  controls: [
    ['attnScheme', { kind: 'select', label: 'positions', values: ATTENTION_SCHEMES, labels: CHOICES }],
    ['attnCausal', { kind: 'checkbox' }],
  ],
  height: (width) => panelsHeight(4, width, PANEL, MIN_WIDTH),
  compute({ pe, st }) {
    const d = Math.min(st.dModel, 16);
    const [a, b] = SENTENCES.map((tokens) => weightsFor(pe, st, st.attnScheme, tokens, d));
    const reordered = new Float32Array(9), diff = new Float32Array(9);
    let worst = 0;
    for (let r = 0; r < 3; r++) {
      for (let c = 0; c < 3; c++) {
        reordered[r * 3 + c] = b[PERM[r] * 3 + PERM[c]];
        diff[r * 3 + c] = a[r * 3 + c] - reordered[r * 3 + c];
        worst = Math.max(worst, Math.abs(diff[r * 3 + c]));
      }
    }
    const sentence = (t) => t.map((w) => WORDS[w]);
    const panels = [
      { title: '“dog bites man”', values: a, labels: sentence(SENTENCES[0]) },
      { title: '“man bites dog”', values: b, labels: sentence(SENTENCES[1]) },
      { title: '“man bites dog”, re-ordered', values: reordered, labels: sentence(SENTENCES[0]) },
      // Coloured to the largest difference (at least ±0.005, so float32 rounding stays white).
      { title: `first − re-ordered (±${fmt(Math.max(worst, 0.005), 3)})`, values: diff, labels: sentence(SENTENCES[0]),
        diverging: Math.max(worst, 0.005) },
    ];
    return { panels, worst, d, scheme: st.attnScheme, causal: st.attnCausal };
  },
  plot: (data, cursor) => ({ kind: 'panels', spec: { minWidth: MIN_WIDTH, cursor,
    panels: data.panels.map((p) => ({ title: p.title, kind: 'matrix', spec: {
      values: p.values, rows: 3, cols: 3, rowLabels: p.labels, colLabels: p.labels, digits: p.diverging ? 3 : 2,
      lo: p.diverging ? -p.diverging : 0, hi: p.diverging ? p.diverging : 1, lut: p.diverging ? DIVERGING : SEQUENTIAL,
      dark: p.diverging ? (t) => Math.abs(t - 0.5) > 0.3 : (t) => t < 0.6 } })) } }),
  // Rows go down the matrix: ArrowUp moves to the row above.
  move: (data, c, key) => movePanels({ panel: c.panel, x: c.x, y: c.y }, data.panels.map(() => ({ nx: 3, ny: 3 })),
    { ArrowUp: 'ArrowDown', ArrowDown: 'ArrowUp' }[key] ?? key),
  note(data) {
    if (data.scheme === 'none' && data.causal) {
      return `NoPE with a causal mask: the maps differ by up to ${fmt(data.worst, 3)}. Each word sees only itself and the `
        + 'words before it, so the first word attends to itself alone and later words spread wider: the mask alone tells '
        + 'a decoder where a word is (why NoPE decoders, like Llama 4\'s NoPE layers, still see order).';
    }
    if (data.scheme === 'none') {
      const same = data.worst === 0 ? 'is exactly the first one (difference 0)'
        : `equals the first up to float32 rounding (largest difference ${fmt(data.worst, 3)}: the softmax adds the same `
          + 'numbers in another order)';
      return `No positions: the re-ordered map ${same}. Attention alone sees a bag of words.`;
    }
    // Unmasked ALiBi: −m·|i − j| is the same either way round, and the second sentence is the first backwards.
    if (data.worst < 1e-3 && !data.causal) {
      return `With ${label(data.scheme)} and no causal mask: the re-ordered map equals the first (largest difference `
        + `${fmt(data.worst, 3)}). Its scores depend only on how far apart two words are, not on which comes first, and `
        + '“man bites dog” is “dog bites man” backwards, every distance kept: it cannot tell them apart. The causal mask breaks the tie.';
    }
    const stand = pageScheme(data.scheme).order.stand?.(data.d) ?? '';
    return `With ${label(data.scheme)}: the maps differ by up to ${fmt(data.worst, 3)}, `
      + `so word order now changes what each word attends to.${stand}`;
  },
  readout: (data, c) => {
    const p = data.panels[c.panel];
    return `${p.title}: weight of “${p.labels[c.y]}” on “${p.labels[c.x]}” = ${fmt(p.values[c.y * 3 + c.x], 6)} `
      + `(d = ${data.d}, ${label(data.scheme)})`;
  },
  csv: (data) => csvLines(['panel', 'query', 'key', 'value'], data.panels.flatMap((p) => p.labels.flatMap((q, r) => p.labels
    .map((k, c) => [p.title.replace(/[,“”]/g, ''), q, k, p.values[r * 3 + c]])))),
  caption: (st) => `attention dog/man scheme=${st.attnScheme} causal=${st.attnCausal} d=${Math.min(st.dModel, 16)}`,
  cursor0: () => ({ panel: 0, x: 0, y: 0 }),
};
