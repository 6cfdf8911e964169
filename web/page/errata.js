// Where the lesson is wrong or loose, said once: the #errata list. Each entry quotes the lesson,
// says what holds instead — computed with the package, or read from the lab's shipped markov run —
// and links to the view that shows it; the places it applies link to the entry (index.html's
// a.erratum-link). `label` says what kind of slip it is; 'refines' marks a right statement made
// more precise, not an error.
import { scrollHints, scrollTable } from '../views/shared/html.js';
import { rows } from '../lab/lab.js';
import { fmt } from '../views/shared/numbers.js';
import { ropeParams } from '../settings/rope-settings.js';
import { diagonalSpread, dotRows, seededVectors } from '../views/shared/vectors.js';

const D = 64;  // the head size of the RoPE checks: small enough to recompute on every change
const LESSON_ROW5 = [0.959, -0.279];  // the lesson's position 5, d_model 8: "0.959 -0.279 …"
const f3 = (v) => fmt(v, 3);

// Scores q_i·k_j / √d of rows [n][d] (x-major: x = key j), as keys times queries.
const scoreMap = (q, k, n, d) => Float32Array.from(dotRows(k, q, n, n, d), (s) => s / Math.sqrt(d));

// RoPE on rows [n][D] at positions 0 … n − 1, with the rope chapter's θ and pair layout.
const rope = (pe, st, x, n) => pe.applyRope(x, { seqLen: n, nHeads: 1, headDim: D,
  params: ropeParams({ ...st, dModel: D, partial: 1 }, {}), layout: st.layout });

// The shipped markov run's losses of a scheme at `times` × T_train, one per seed, and at T_train.
function labLosses(lab, scheme, times, scaling = 'none') {
  const r = lab.peekShipped('markov');
  if (!r) return null;
  const T = r.config.trainLength;
  const at = rows(r, scheme, T).map((e) => e.loss), far = rows(r, scheme, times * T, scaling).map((e) => e.loss);
  return at.length && far.length === at.length ? { T, at, far, ratios: far.map((v, k) => v / at[k]) } : null;
}
const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
const range = (v) => `${f3(Math.min(...v))}–${f3(Math.max(...v))}`;
const LAB_LOADING = 'The lab\'s shipped run is loading.';

/**
 * The entries, in the order of the views they concern: { id, label, view, lesson (HTML), short (what
 * holds, in a line), correct(ctx) → HTML (what holds, computed or measured) }.
 */
const ERRATA = [
  {
    id: 'pair0', label: 'wrong', view: 'dim-traces',
    short: 'pair 0 repeats every 2π ≈ 6.28 positions.',
    lesson: '“i = 0 alternates every position.”',
    correct({ pe }) {
      const t = pe.sinusoidal(7, 8);
      const sines = Array.from({ length: 7 }, (_, p) => f3(t[p * 8]));
      return `Pair 0 turns 1 rad per position, one full wave every 2π ≈ 6.28 positions: sin(pos) for pos 0 … 6 is `
        + `${sines.join(', ')} (the package's dimension 0), so its sign changes about every π ≈ 3.14 positions, not every `
        + 'position. Alternating every position would take a turn of π per position; the fastest pair turns 1.';
    },
  },
  {
    id: 'row5', label: 'wrong', view: 'worked-example',
    short: 'sin 5 = −0.959, cos 5 = 0.284.',
    lesson: 'The worked example (d_model 8) prints position 5 as <code>0.959 -0.279 …</code>.',
    correct({ pe }) {
      const r = pe.sinusoidal(1, 8, { positions: [5] });
      const other = Math.atan2(LESSON_ROW5[0], LESSON_ROW5[1]);
      return `sin 5 = ${f3(r[0])} and cos 5 = ${f3(r[1])}: the printed pair is the sine and cosine of about `
        + `${fmt(other, 3)} rad, not of 5. The rest of the row (pairs 1–3) is ${Array.from(r.subarray(2), f3).join(' ')}.`;
    },
  },
  {
    id: 'rope-additive', label: 'wrong', view: 'rope-rotation',
    short: 'the offset enters inside each pair\'s cosine, not as an added term.',
    lesson: 'RoPE\'s score is written q·k + f(m − n): the content\'s score plus a term for the offset.',
    correct({ pe, st }) {
      const n = 6, x = seededVectors(pe, 2 * n, D, 41);
      const q = x.subarray(0, n * D), k = x.subarray(n * D);
      const turned = scoreMap(rope(pe, st, q, n), rope(pe, st, k, n), n, D), plain = scoreMap(q, k, n, D);
      const diffs = [0, 1, 2].map((i) => `${f3(turned[(i + 3) * n + i] - plain[(i + 3) * n + i])} (words ${i} and ${i + 3})`);
      return 'RoPE is not additive: it turns each pair of k against q by (n − m)·θ<sub>i</sub>, so the offset enters '
        + 'inside each pair\'s cosine, with the content: score = Σ<sub>i</sub> |q<sub>i</sub>||k<sub>i</sub>| '
        + 'cos(φ<sub>i</sub> + (n − m)·θ<sub>i</sub>). For random words 3 apart (d 64), RoPE\'s score minus the same '
        + `words' q·k is ${diffs.join(', ')}: no single f(3) gives all three. What holds is that the score depends on `
        + 'the positions only through n − m.';
    },
  },
  {
    id: 'rope-random-check', label: 'wrong', view: 'rope-relative',
    short: 'that check cannot tell RoPE from no positions at all.',
    lesson: 'RoPE\'s relative property is checked by drawing random q and k at every position, rotating them and '
      + 'looking at the score matrix.',
    correct({ pe, st }) {
      const n = 16, x = seededVectors(pe, 2 * n, D, 33);
      const q = x.subarray(0, n * D), k = x.subarray(n * D);
      const turned = diagonalSpread(scoreMap(rope(pe, st, q, n), rope(pe, st, k, n), n, D), n);
      const plain = diagonalSpread(scoreMap(q, k, n, D), n);
      return 'That tests nothing: with other content at every position no diagonal is constant, whatever the '
        + `positions do. With random q and k at each of ${n} positions (d 64), RoPE's diagonals change by up to `
        + `${f3(turned)}, and the same vectors with no positions at all by ${f3(plain)}: the check cannot tell them `
        + 'apart. Keep one q and one k at every position (the view) or move both positions together.';
    },
  },
  {
    id: 'rope-2x', label: 'refines', view: 'ntk',
    short: 'in the lab it holds, and the loss climbs from the first token past T_train.',
    lesson: '“Standard RoPE breaks at 2× training length.”',
    correct({ lab }) {
      const two = labLosses(lab, 'rope', 2), r = lab.peekShipped('markov');
      if (!two) return LAB_LOADING;
      // The loss on the last quarter of a text twice T_train long, RoPE's and NoPE's, per seed.
      const lastQuarter = (scheme) => rows(r, scheme, 2 * two.T).map((e) => {
        const from = Math.ceil((1.5 * two.T) / e.bucketWidth), b = e.bucketLoss.slice(from);
        return mean(b);
      });
      const ropeEnd = lastQuarter('rope'), nopeEnd = lastQuarter('none');
      const worse = ropeEnd.filter((v, k) => v > nopeEnd[k]).length;
      return `It holds in the lab, and the break starts sooner. Its RoPE model (markov, T_train ${two.T}) has loss `
        + `${f3(mean(two.at))} at T_train and ${f3(mean(two.far))} over a text twice as long (${range(two.ratios)} times `
        + `as much, 5 seeds); on that text's last quarter it is at ${f3(mean(ropeEnd))}, worse than a model with no `
        + `positions at all on the same positions (${f3(mean(nopeEnd))}) in ${worse} of ${ropeEnd.length} seeds. The `
        + 'loss climbs from the first token past T_train (the lab chapter\'s right-hand plot).';
    },
  },
  {
    id: 'dynamic-32k', label: 'claims more', view: 'ntk',
    short: 'in the lab dynamic NTK helps at 8 × T_train, but not back to the loss at T_train.',
    lesson: '“LLaMA-2 … can process 32K with dynamic NTK.”',
    correct({ lab }) {
      const plain = labLosses(lab, 'rope', 8), dyn = labLosses(lab, 'rope', 8, 'dynamic');
      if (!plain || !dyn) return LAB_LOADING;
      const others = ['linear', 'ntk', 'yarn'].map((s) => labLosses(lab, 'rope', 8, s));
      const best = dyn.far.filter((v, k) => others.every((o) => v < o.far[k])).length;
      return `32K is 8 × LLaMA-2's 4,096 positions. The lab cannot test LLaMA-2; on its own RoPE model read at 8 × `
        + `T_train without retraining, dynamic NTK brings the loss from ${f3(mean(plain.far))} to ${f3(mean(dyn.far))} `
        + `(the lowest of the scalings in ${best} of ${dyn.far.length} seeds), still ${range(dyn.ratios)} times its loss at `
        + 'T_train. Better than no scaling is not as good as at the training length: models that serve long contexts are '
        + 'also fine-tuned at them (the lab chapter\'s fold).';
    },
  },
  {
    id: 'alibi-distance', label: 'refines', view: 'alibi',
    short: 'causal models use the distance back, i − j; the two agree on every key they see.',
    lesson: 'ALiBi\'s bias is written −m·|i − j|.',
    correct({ pe, st }) {
      const slopes = pe.alibiSlopes(st.heads, { maxBias: st.maxBias });
      const h = slopes.indexOf(Math.max(...slopes));
      const row = (causal) => Array.from(pe.alibiBias(st.heads, 8, 8, { causal, maxBias: st.maxBias })
        .subarray(h * 64 + 4 * 8, h * 64 + 5 * 8));
      const cells = (r) => r.map((v) => `<td class="num">${f3(v)}</td>`).join('');
      const table = `<table><thead><tr><th scope="col">key j</th>${row(true).map((_, j) => `<th scope="col">${j}</th>`).join('')}`
        + `</tr></thead><tbody><tr><th scope="row">causal: −m·(i − j)</th>${cells(row(true))}</tr>`
        + `<tr><th scope="row">−m·|i − j|</th>${cells(row(false))}</tr></tbody></table>`;
      return 'Right for every key a causal model sees: BLOOM and MPT use the distance back, −m·(i − j), on the keys '
        + 'j ≤ i, and there the two agree; −m·|i − j| also charges keys after the query, the symmetric form of '
        + `encoders. Query i = 4 of 8, the steepest head (slope m = ${fmt(slopes[h], 4)}), from the package's `
        + `alibiBias:${scrollTable(table, 'ALiBi: the distance back against |i − j|')}`;
    },
  },
  {
    id: 'sinusoidal-extrapolation', label: 'contradicts itself', view: 'comparison-table',
    short: 'the lab measures “Poor”.',
    lesson: 'One of the lesson\'s tables rates sinusoidal extrapolation “Good”, the other “Poor”.',
    correct({ lab }) {
      const sin = labLosses(lab, 'sinusoidal', 4), alibi = labLosses(lab, 'alibi', 4);
      if (!sin || !alibi) return LAB_LOADING;
      return `“Poor” is what the lab measures: loss at 4 × T_train ÷ loss at T_train is ${f3(mean(sin.ratios))} for `
        + `sinusoidal (${range(sin.ratios)} over 5 seeds), against ${f3(mean(alibi.ratios))} for ALiBi. A sinusoidal `
        + 'vector exists for every position, which may be what “Good” meant; existing is not the same as working.';
    },
  },
];

/**
 * Fills `list` (#errata's <ol>) with the entries — each a line that says what holds, opening on what
 * was computed or measured — and returns update(ctx) ({ pe, st, lab }), which recomputes the
 * corrections when what they read changed. Nothing is computed, and the lab's shipped run is not
 * fetched, until the list comes near the screen (lab.shippedResult; its 'shipped' event calls for
 * an update).
 */
export function buildErrata(list, viewTitle, lab) {
  list.innerHTML = ERRATA.map((e) => `<li id="erratum-${e.id}" data-erratum="${e.id}"><details>`
    + `<summary><span class="erratum-label">${e.label}</span> <span class="lesson-says">${e.lesson}</span> `
    + `<span class="short">What holds: ${e.short}</span></summary>`
    + `<div class="correction"></div><p><a class="erratum-view" href="#view-${e.view}">See it: ${viewTitle(e.view)}</a></p>`
    + '</details></li>').join('');
  let near = false, latest = null, last = '';
  const refill = scrollHints(list);  // the ALiBi correction's table is wider than a phone
  function compute(ctx) {
    const { st } = ctx;
    const key = [st.theta, st.layout, st.heads, st.maxBias, Boolean(lab.peekShipped('markov'))].join();
    if (key === last) return;
    last = key;
    refill(() => { for (const e of ERRATA) list.querySelector(`#erratum-${e.id} .correction`).innerHTML = e.correct(ctx); });
  }
  new IntersectionObserver((entries, observer) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    observer.disconnect();
    near = true;
    lab.shippedResult('markov');
    if (latest) compute(latest);
  }, { rootMargin: '400px' }).observe(list);
  return function update(ctx) {
    latest = ctx;
    if (near) compute(ctx);
  };
}
