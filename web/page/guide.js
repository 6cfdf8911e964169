// The guided path: each chapter has a few "what to notice" steps. A step's button sets the settings
// it needs — through the page's settings, as one committed change, so the URL holds it and Back
// undoes it — scrolls to the view it is about, and shows a caption over that view's plot saying
// what to look at. Steps and captions are computed from the settings on the page, so they follow a
// preset: the clocks step puts the position past this model's L_train, whatever that is.
import { ntkBase, ropeRule } from '../settings/rope-settings.js';
import { FIELDS, dimsOf } from '../settings/state.js';
import { wavelengthText, wavelengths } from '../views/shared/wavelengths.js';

const n = (v) => v.toLocaleString('en-US');

// A clock position past L_train: twice it, or L_target if that comes first (still past L_train).
function pastTrain(st) {
  const p = st.lTarget > st.lTrain ? Math.min(2 * st.lTrain, st.lTarget) : 2 * st.lTrain;
  return Math.min(FIELDS.pos.max, p);
}
const sqrt = (v) => Math.sqrt(v).toFixed(2);
const HOLD = 3000;  // ms a step's view is kept in sight while it takes its height

/**
 * The steps, by chapter: { label, patch(st) → settings to set, view: the view it is about,
 * caption(st, pe) → what to look at }. A patch never depends on a setting it sets.
 */
export const GUIDES = {
  order: [
    { label: 'No positions', view: 'attention', patch: () => ({ attnScheme: 'none', attnCausal: false }),
      caption: () => 'Look at the last map, first − re-ordered: every cell is 0.000 (or float32 rounding). Without '
        + 'positions the second sentence\'s map is the first one with rows and columns swapped: attention cannot tell '
        + 'the two sentences apart.' },
    { label: 'Add sinusoidal positions', view: 'attention', patch: () => ({ attnScheme: 'sinusoidal', attnCausal: false }),
      caption: () => 'The difference map now has colour: the same word at another position gets other weights, so word '
        + 'order changes what each word attends to.' },
    { label: 'No positions, causal mask', view: 'attention', patch: () => ({ attnScheme: 'none', attnCausal: true }),
      caption: () => 'Still no position vectors, yet the difference is not zero: each word sees only the words before it, '
        + 'so the first word attends to itself alone. The mask by itself tells a decoder where a word is (NoPE).' },
  ],
  embedding: [
    { label: 'Unscaled word vectors', view: 'embedding', patch: () => ({ embScale: false }),
      caption: (st) => `Look at the lengths (the last panel): ‖PE‖ = ${sqrt(st.dModel / 2)} = √(d_model/2) for every token, `
        + '‖word‖ about 1, and cos(sum, word) is small: the sum is mostly position, the word nearly drowned.' },
    { label: 'Scaled by √d_model', view: 'embedding', patch: () => ({ embScale: true }),
      caption: (st) => `‖word‖ grows to about √d_model = ${sqrt(st.dModel)} and the cos column rises: word and position `
        + 'share the sum. The two “the” columns of the sum differ: same word, other position.' },
    { label: 'Why add, not concatenate', view: 'add-vs-concat', patch: () => ({ concatWidth: 128 }),
      caption: (st) => `The two maps on the left are the same numbers: concatenating and then multiplying by W is adding a `
        + `projected position. The bars: concatenating a 128-wide position makes every token ${n(st.dModel + 128)} numbers `
        + `instead of ${n(st.dModel)}, and every layer's weights grow with the square of that.` },
  ],
  sinusoidal: [
    { label: 'Fast and slow clocks', view: 'dim-traces', patch: () => ({ dims: '0,20,40,60' }),
      caption: (st, pe) => {
        // The highest dimension the step draws (its patch's, those below d_model), against dim 0.
        const top = Math.max(...dimsOf(st)), [first, last] = wavelengths(pe, st, [0, top]);
        const setting = `(base ${n(st.base)}, d_model ${st.dModel}, ${st.sinLayout} layout)`;
        if (top === 0) return `dim 0 repeats every ${wavelengthText(first)} positions (2π): d_model ${st.dModel} has no slower pair to compare ${setting}.`;
        return `dim 0 repeats every ${wavelengthText(first)} positions (2π), dim ${top} every ${wavelengthText(last)}: each pair `
          + `higher up turns more slowly ${setting}.`;
      } },
    { label: 'A shift is a rotation', view: 'shift', patch: () => ({ shiftPos: 5, shiftK: 10 }),
      caption: () => 'M_k turned every pair by k·ω_i: the ring lands on the filled dot, and over the whole vector the '
        + 'largest error is float32 rounding — the same matrix for every pos.' },
    { label: 'Stripes or bands', view: 'pe-heatmap', patch: () => ({ seqLen: 100 }),
      caption: () => 'Each column is one position. Left, the rows alternate sin and cos and stripe; right, nearly the same '
        + 'clocks with all sines first and all cosines after, so neighbouring rows blend into bands. The bottom rows '
        + '(fast pairs) change every few positions, the top ones barely move across all 100.' },
  ],
  learned: [
    { label: 'What training made', view: 'learned', patch: () => ({ learnedSource: 'trained', learnedPos: 10 }),
      caption: () => 'The lab\'s trained table (left) and the cosine similarity of its rows (middle): compare the middle map '
        + 'with the sinusoidal chapter\'s, where near positions are alike. The sentence under the plots measures how much '
        + 'more alike neighbouring rows are than any two, and says what the model was trained on.' },
    { label: 'A row of the table', view: 'learned',
      patch: (st) => ({ learnedSource: 'init', learnedPos: Math.min(100, st.maxLen - 1) }),
      caption: (st) => `At initialisation, position ${Math.min(100, st.maxLen - 1)} has its row: the right plot shows its `
        + `${st.dModel} numbers, trained like any other weight.` },
    { label: 'Past max_len', view: 'learned', patch: (st) => ({ learnedSource: 'init', learnedPos: st.maxLen }),
      caption: (st) => `Position ${n(st.maxLen)} = max_len has no row: the package refuses the lookup (right). A model `
        + 'trained with this table cannot represent the position at all.' },
  ],
  rope: [
    { label: 'Move both positions', view: 'rope-rotation', patch: () => ({ rotShift: 40 }),
      caption: () => 'Both q and k turned by the same angle, so the angle between them did not change: the score, '
        + 'flat on the right, stays put as both positions move.' },
    { label: 'A slow pair', view: 'rope-rotation', patch: () => ({ rotPair: 40 }),
      caption: (st, pe) => {
        const rule = ropeRule(st, 'none');
        if (rule) return rule;
        const inv = pe.ropeFrequencies({ headDim: st.dModel, theta: st.theta, partialRotaryFactor: st.partial }).invFreq;
        const i = Math.min(40, inv.length - 1);
        const m = st.rotM + st.rotShift, angle = m * inv[i];  // q's position as drawn: m + s
        return `Pair ${i} turns by θ = ${inv[i].toPrecision(3)} rad per position (the package's ropeFrequencies): `
          + `at q's position m + s = ${m} it has turned ${angle.toPrecision(2)} rad`
          + `${angle < 0.5 ? ', barely at all' : `, where pair 0 has turned ${(m * inv[0]).toPrecision(2)}`}.`;
      } },
    { label: 'Same words, every offset', view: 'rope-relative', patch: () => ({ relLen: 48 }),
      caption: () => 'RoPE\'s map (first): every diagonal one colour — the score sees the offset only. Sinusoidal added '
        + 'at the input (last): the diagonals change.' },
  ],
  bias: [
    { label: '8 heads', view: 'alibi', patch: () => ({ heads: 8, maxBias: 8 }),
      caption: () => 'The steepest head (bottom row, slope 1/2) fades to nothing within about ten positions; the '
        + 'shallowest (top, 1/256) still sees hundreds back.' },
    { label: '12 heads', view: 'alibi', patch: () => ({ heads: 12, maxBias: 8 }),
      caption: () => '12 is not a power of two: the 4 heads past 8 take slopes from the series of 16 heads (2^−0.5, '
        + '2^−1.5, …), in between the others.' },
    { label: 'T5\'s decoder', view: 't5-buckets', patch: () => ({ t5Bidir: false }),
      caption: (st) => `The decoder only looks back: all ${st.t5Buckets} buckets go to keys before the query, and the `
        + 'buckets grow wider with distance.' },
  ],
  'long-context': [
    { label: 'NTK at s = 4', view: 'ntk', patch: () => ({ factor: 4 }),
      caption: (st, pe) => {
        const rule = ropeRule(st, 'ntk');
        if (rule) return rule;
        const { d, base } = ntkBase(pe, st, {});
        return `NTK's base is now ${n(Math.round(base))} = ${n(st.theta)}·4^(${d}/${d - 2}). Left: the NTK line starts `
          + 'at 1 for the fastest pair and reaches 4 at the slowest, while PI slows every pair 4 times. Right: at '
          + '4 × T_train, compare the lines with the plain model\'s.';
      } },
    { label: 'Eight times, like LLaMA-2 at 32K', view: 'ntk', patch: () => ({ factor: 8 }),
      caption: () => 'LLaMA-2 was trained on 4,096 positions: 32K is 8 times that. Right, at 8 × T_train (the shipped '
        + 'run): NTK, dynamic NTK and YaRN do better than the plain model and PI, applied without fine-tuning, worse; '
        + 'none gets back to the loss at T_train (the errata give the numbers).' },
    { label: 'No scaling, past L_train', view: 'clocks', patch: (st) => ({ scaling: 'none', pos: pastTrain(st) }),
      caption: (st) => `Position ${n(pastTrain(st))} is past L_train = ${n(st.lTrain)}: the slow pairs never turned that `
        + 'far in training, and their rims are red.' },
    { label: 'YaRN ×4, same position', view: 'clocks', patch: (st) => ({ scaling: 'yarn', factor: 4, pos: pastTrain(st) }),
      caption: (st) => `The same position, ${n(pastTrain(st))}: YaRN stretched the slow pairs 4×, so their angles stay `
        + `inside what training reached (up to about L_train × 4 = ${n(4 * st.lTrain)}) and the rims are grey.` },
  ],
  comparison: [
    { label: 'Where RoPE acts', view: 'where-position', patch: () => ({ attnScheme: 'rope' }),
      caption: () => 'RoPE leaves the embedding alone: it rotates q and k in every layer, so only their offset reaches '
        + 'the score.' },
    { label: 'Where ALiBi acts', view: 'where-position', patch: () => ({ attnScheme: 'alibi' }),
      caption: () => 'ALiBi adds a number to each score, by distance, just before the softmax: no vector carries the '
        + 'position at all.' },
  ],
  misconceptions: [
    { label: 'One-hot positions', view: 'one-hot', patch: () => ({ seqLen: 1000, hotPos: 10 }),
      caption: () => 'One-hot positions for 1,000 positions need 1,000 dimensions. The left map is the identity: position '
        + '10 is as unlike 11 as 63 (the spike in the right plot), while the sinusoidal similarity falls off smoothly. '
        + 'And a position past the table has no dimension at all: the note gives the package\'s refusal of row 64 '
        + 'from the table of the 64 positions drawn.' },
    { label: 'Four terms, not one', view: 'cross-terms', patch: () => ({ crossLen: 16 }),
      caption: () => 'content · content is the score words would have without positions; the other three maps are what '
        + 'adding positions puts into every score. Only RoPE (last) has a single term.' },
  ],
  lab: [
    { label: 'Loss along 8 × T_train', view: 'lab-extrapolation', patch: () => ({ labAt: '8' }),
      caption: () => 'The right plot: loss along the positions of a text 8 times the training length. Where a line '
        + 'climbs, that scheme breaks.' },
    { label: 'The schemes alone', view: 'lab-extrapolation', patch: () => ({ labScalings: false }),
      caption: () => 'Without RoPE\'s inference scalings: one line per trained scheme.' },
  ],
};

const same = (a, b) => a === b || (typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) < 1e-12);

// Scrolls a view to just below the settings bar so that its caption (note) and plot are in sight,
// and as much above them (the view's heading first) as the screen leaves room for.
function showStep(section, note) {
  const bar = parseFloat(getComputedStyle(document.documentElement).getPropertyValue('--settings-height')) || 96;
  const plot = section.querySelector('figure, .view-table') ?? note;
  const room = window.innerHeight - bar - 16;
  const top = Math.min(note.getBoundingClientRect().top,
    Math.max(section.getBoundingClientRect().top, plot.getBoundingClientRect().bottom - room));
  window.scrollTo({ top: window.scrollY + top - bar - 8 });
}

/**
 * Builds each chapter's steps (before its views) and the caption boxes. host: { pe, state(),
 * apply(patch) (one committed change), opening(element) (folds.js), pin(show, ms) (page-links.js), view(id) → its
 * <section> }. Returns { sync(st) }: the step
 * last pressed that the settings still match is marked and its caption shown (Back unmarks it).
 */
export function buildGuides(root, host) {
  const guides = [];
  for (const chapter of root.querySelectorAll('section[data-chapter]')) {
    const steps = GUIDES[chapter.dataset.chapter];
    if (!steps) continue;
    const box = document.createElement('div');
    box.className = 'guide';
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', `What to notice: ${chapter.querySelector('h2').textContent}`);
    box.innerHTML = `<span class="guide-title">What to notice (${steps.length} steps):</span><ol>${steps.map((s, k) => `<li><button type="button" `
      + `data-step="${k}" aria-pressed="false">${k + 1}. ${s.label}</button></li>`).join('')}</ol>`;
    chapter.querySelector('.chapter-controls, .views').before(box);
    const g = { chapter, steps, box, pressed: [] };
    box.addEventListener('click', (e) => {
      const b = e.target.closest('button[data-step]');
      if (b) go(g, Number(b.dataset.step));
    });
    guides.push(g);
  }

  function go(g, k) {
    const step = g.steps[k];
    g.pressed = [...g.pressed.filter((x) => x !== k), k];
    // A step about a view in a closed fold opens it, in the same history entry.
    host.apply({ ...host.opening(host.view(step.view)), ...step.patch(host.state()) });
    sync(host.state());
    const section = host.view(step.view), note = section?.querySelector('.guide-note');
    // Shown again while the page changes height (views in a fold the step just opened take their
    // heights when first drawn), as a link's target is.
    if (note) host.pin(() => showStep(section, note), HOLD); else section?.scrollIntoView({ block: 'start' });
    // Focus follows: the next Tab goes on from the caption (its Next button, else the caption).
    const focus = note?.querySelector('button[data-next]') ?? note;
    if (focus === note && note) note.tabIndex = -1;
    focus?.focus({ preventScroll: true });
  }

  const matches = (st, step) => Object.entries(step.patch(st)).every(([key, v]) => same(st[key], v));

  function sync(st) {
    for (const g of guides) {
      const k = [...g.pressed].reverse().find((i) => matches(st, g.steps[i]));
      for (const b of g.box.querySelectorAll('button[data-step]')) b.setAttribute('aria-pressed', String(Number(b.dataset.step) === k));
      for (const [i, step] of g.steps.entries()) {
        const section = host.view(step.view);
        if (!section) continue;
        let note = section.querySelector(`.guide-note[data-chapter="${g.chapter.dataset.chapter}"]`);
        if (i !== k) {
          if (note && Number(note.dataset.step) === i) note.remove();
          continue;
        }
        if (!note) {
          note = document.createElement('div');
          note.className = 'guide-note';
          note.dataset.chapter = g.chapter.dataset.chapter;
          note.setAttribute('role', 'status');
          section.querySelector('figure, .view-table').before(note);
          note.addEventListener('click', (e) => {
            if (e.target.closest('button[data-next]')) go(g, Number(e.target.closest('button').dataset.next));
          });
        }
        note.dataset.step = String(i);
        const next = i + 1 < g.steps.length
          ? `<button type="button" data-next="${i + 1}">Next: ${g.steps[i + 1].label} ›</button>` : '';
        const html = `<p><strong>Step ${i + 1} of ${g.steps.length}: ${step.label}.</strong> ${step.caption(st, host.pe)}</p>${next}`;
        if (note.innerHTML !== html) note.innerHTML = html;
      }
    }
  }
  return { sync };
}
