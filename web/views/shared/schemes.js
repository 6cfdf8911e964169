// The positional schemes as the page shows them, one entry each: what the shared views of the
// explorer draw for a scheme. A scheme's place on the page is its entry here (and its own views,
// web/views/<id>.js). An entry has:
//   id, name   the lab's scheme name (pe.lab.schemes) or the page's; its name in the comparison table
//   label      its name in the order chapter (menu: its text in the "positions" menu, if not the id)
//   order      the order chapter's three-word attention (views/attention.js): table(pe, st, d), a
//              position table added to the tokens, or options(pe, st, d), pe.attention options;
//              stand(d): what stands in for a trained model there
//   distance   its panel of "score vs distance" (ctx, xs) → { title, yLabel, series } or { title, message }
//   compare    its row of the comparison table: how, relative, params(st), claim, usedBy; lesson: a row of
//              the lesson's own table (the others are beyond the lesson, in the table's fold)
//   where      its tag in the where-position diagram: { label, stage, group }
//   model      how a model file of the scheme sets the page (model-settings.js): field, readModel's
//              key for it; settings(info, { set, state, width }) sets the settings from it (set(key,
//              value) within the field's limits; width: readModel's dModel, if any) and returns
//              what was read, in words, or throws what the page cannot use; published: the
//              config's names of the settings it sets, for the words about a value the limits changed
// The settings' scheme menus are read from here (state.js): "positions" lists the entries with
// order, "schemes shown" those with distance, in this order.
import { SEQUENTIAL, SERIES } from '../../plot/colormap.js';
import { headsBySlope } from './heads.js';
import { lutColor } from '../../plot/heatmap.js';
import { fileRope, ropeParams, ropeRule } from '../../settings/rope-settings.js';
import { dotRows, seededVectors } from './vectors.js';

// q·k / d for all-ones q and k, q at each distance Δ and k at 0, both rotated (so a scaling's
// attention factor a enters twice: a²).
function ropeCurve(pe, st, params, xs) {
  const d = st.dModel;
  const opts = { nHeads: 1, headDim: d, params, layout: st.layout, precision: st.precision };
  const q = pe.applyRope(new Float32Array(xs.length * d).fill(1), { ...opts, seqLen: xs.length, positions: xs });
  const k = pe.applyRope(new Float32Array(d).fill(1), { ...opts, seqLen: 1, positions: [0] });
  return dotRows(q, k, xs.length, 1, d).map((s) => s / d);
}

/** T5's first distances get a bucket each (HF's max_exact: half the buckets, halved again for each
 * direction when bidirectional) and max distance must lie past them, as the package checks. The rule
 * in words for a learner when buckets and max distance break it (for one direction, or both when
 * `bidirectional` is undefined), or ''. */
export function t5Rule(st, bidirectional) {
  const half = Math.floor(st.t5Buckets / 2), exact = bidirectional ? Math.floor(half / 2) : half;
  if (st.t5MaxDist > exact) return '';
  return `T5 gives each of the first ${exact} distances a bucket of its own (half of ${st.t5Buckets} buckets`
    + `${bidirectional ? ', halved again for the two directions' : ''}), so max distance must be more than ${exact}; `
    + `${st.t5MaxDist} is not. Raise max distance or lower the buckets.`;
}

export const PAGE_SCHEMES = [
  {
    id: 'none', label: 'no positions (NoPE)', menu: 'none (NoPE)',
    order: {},
    where: { label: 'NoPE', stage: 5, group: 'none' },
  },
  {
    id: 'sinusoidal', name: 'Sinusoidal', label: 'sinusoidal, added',
    order: { table: (pe, st, d) => pe.sinusoidal(3, d, { base: st.base }) },
    distance({ pe, st }, xs) {
      const rows = pe.sinusoidal(xs.length, st.dModel, { base: st.base, layout: st.sinLayout, positions: xs });
      const norm = Math.ceil(st.dModel / 2);
      const y = dotRows(rows, rows.subarray(0, st.dModel), xs.length, 1, st.dModel).map((s) => s / norm);  // each row · the first
      return { title: 'Sinusoidal: PE(0)·PE(Δ)', yLabel: `score / ${norm}`,
        series: [{ label: `base ${st.base}`, x: xs, y, color: SERIES[0] }] };
    },
    compare: { lesson: true, how: 'fixed vector added to the input',
      relative: 'partly: PE(i)·PE(j) depends on i − j, but the content × position terms do not',
      params: () => ({ formula: 'computed, nothing learned', value: 0 }),
      claim: 'defined at any position, but quality falls past the training length',
      usedBy: 'the original Transformer (Vaswani et al. 2017)' },
    where: { label: 'sinusoidal', stage: 1, group: 'absolute' },
  },
  {
    id: 'learned', name: 'Learned', label: 'learned table, added',
    order: { table: (pe, st, d) => seededVectors(pe, 3, d, 11, 0.5),
      stand: () => ' (A seeded random table stands in for trained rows.)' },
    compare: { lesson: true, how: 'trained vector added to the input', relative: 'no: absolute rows',
      params: (st) => ({ formula: `max_len × d_model = ${st.maxLen} × ${st.dModel}`, value: st.maxLen * st.dModel }),
      claim: 'none: no row exists past max_len' },
    where: { label: 'learned', stage: 1, group: 'absolute' },
  },
  {
    id: 'rope', name: 'RoPE', label: 'RoPE on q and k',
    order: {
      options(pe, st, d) {
        if (d % 2) throw new Error(`RoPE turns pairs of dimensions: it needs an even d (here d = ${d}). Choose an even d_model.`);
        return { rope: { headDim: d, theta: st.theta } };
      },
      stand: (d) => ` (Small here: across three positions only the fastest of the ${Math.floor(d / 2)} pairs turn far; `
        + 'the others barely rotate over 2 positions.)',
    },
    distance({ pe, st, extras }, xs) {
      const rule = ropeRule(st);
      if (rule) return { title: 'RoPE', message: rule };
      const plain = ropeCurve(pe, st, ropeParams(st, extras), xs);
      const series = [{ label: `θ ${st.theta}, no scaling`, x: xs, y: plain, color: SERIES[1] }];
      const factors = Boolean(fileRope(st, extras)?.freqFactors);
      if ((st.scaling !== 'none' || factors) && (st.scaling !== 'longrope' || extras.longFactors)) {
        const y = ropeCurve(pe, st, ropeParams(st, extras, st.scaling, true), xs);
        series.push({ label: `${factors ? 'the file\'s frequencies' : `${st.scaling} ×${st.factor}`} (a² included)`, x: xs, y,
          color: SERIES[3], dash: [6, 3] });
      }
      return { title: 'RoPE: q·k / d, q = k = all ones', yLabel: 'score / d', series };
    },
    compare: { lesson: true, how: 'rotates q and k by pos·θᵢ', relative: 'yes: q·k depends only on m − n',
      params: () => ({ formula: '0 (θᵢ fixed)', value: 0 }), claim: 'degrades past L_train unless scaled (NTK, YaRN, llama3)' },
    where: { label: 'RoPE', stage: 3, group: 'rotary' },
  },
  {
    id: 'alibi', name: 'ALiBi', label: 'ALiBi bias',
    order: { options: (pe, st) => ({ alibi: pe.alibiSlopes(st.heads, { maxBias: st.maxBias }).subarray(0, 1) }),
      stand: () => ' (ALiBi here uses its steepest head\'s slope.)' },
    distance({ pe, st }, xs) {
      const n = xs[xs.length - 1] + 1;
      const bias = pe.alibiBias(st.heads, 1, n, { causal: true, maxBias: st.maxBias });
      // One colour per head by its slope's rank, from viridis 0.35 (dark enough on white, light
      // enough on the dark theme: 0.25 was a navy hard to see there) to 0.92.
      const series = headsBySlope(pe.alibiSlopes(st.heads, { maxBias: st.maxBias })).map((h, rank) => ({
        label: rank === 0 ? `head ${h} (steepest)` : rank === st.heads - 1 ? `head ${h} (shallowest)` : '', head: h,
        x: xs, y: Float64Array.from(xs, (dx) => bias[h * n + (n - 1 - dx)]),
        color: lutColor(SEQUENTIAL, 0.35 + (st.heads > 1 ? (0.57 * rank) / (st.heads - 1) : 0)) }));
      return { title: `ALiBi: bias, one colour per head (${st.heads})`, yLabel: 'bias', series };
    },
    compare: { lesson: true, how: 'adds −slope·distance to scores', relative: 'yes: a function of the distance',
      params: () => ({ formula: '0 (slopes fixed)', value: 0 }), claim: 'good: train short, test long' },
    where: { label: 'ALiBi', stage: 4, group: 'bias' },
    model: {
      field: 'alibi',
      settings({ nHeads, maxBias }, { set, width }) {
        if (!nHeads) throw new Error('An ALiBi model needs the number of heads (n_head or n_heads): ALiBi has one slope per head.');
        set('heads', nHeads);
        set('maxBias', maxBias);
        set('dModel', width);
        return `ALiBi ${nHeads} heads, max bias ${maxBias}`;
      },
    },
  },
  {
    id: 't5', name: 'T5 bias', label: 'T5 bias',
    order: {
      options(pe, st) {
        const rule = t5Rule(st, true);
        if (rule) throw new Error(rule);
        return { t5: { table: seededVectors(pe, st.t5Buckets, 1, 5), numBuckets: st.t5Buckets, maxDistance: st.t5MaxDist,
          bidirectional: true } };
      },
      stand: () => ' (A seeded random table stands in for trained biases.)',
    },
    distance({ pe, st }, xs) {
      const rule = t5Rule(st, st.t5Bidir);
      if (rule) throw new Error(rule);
      const buckets = pe.t5Bucket(Float64Array.from(xs, (dx) => -dx),
        { bidirectional: st.t5Bidir, numBuckets: st.t5Buckets, maxDistance: st.t5MaxDist });
      return { title: 'T5: bucket of the key Δ positions back', yLabel: 'bucket', series: [
        { label: `${st.t5Bidir ? 'encoder (bidirectional)' : 'decoder'}: ${st.t5Buckets} buckets, max distance ${st.t5MaxDist}`, x: xs, y: Float64Array.from(buckets), color: SERIES[5],
          step: true }] };
    },
    compare: { lesson: true, how: 'adds a learned bias per bucket', relative: 'yes: a function of the bucketed distance',
      params: (st) => ({ formula: `buckets × heads = ${st.t5Buckets} × ${st.heads}`, value: st.t5Buckets * st.heads }),
      claim: 'moderate: distances past max distance share the last bucket' },
    where: { label: 'T5', stage: 4, group: 'bias' },
    model: {
      field: 't5',
      published: { t5Buckets: 'relative_attention_num_buckets', t5MaxDist: 'relative_attention_max_distance' },
      settings(t, { set, state, width }) {
        if (t.nHeads) set('heads', t.nHeads);
        set('t5Buckets', t.numBuckets);
        set('t5MaxDist', t.maxDistance);
        state.t5Bidir = t.bidirectional;
        set('dModel', width);
        return `T5 ${t.numBuckets} buckets, max distance ${t.maxDistance}`;
      },
    },
  },
  {
    id: 'xpos', name: 'xPos',
    compare: { how: 'rotates q and k by pos·θᵢ and scales pair i by ζᵢ^(±pos/γ)',
      relative: 'yes: q·k depends only on m − n, and decays with it',
      params: () => ({ formula: '0 (θᵢ, ζᵢ, γ = 512 fixed)', value: 0 }),
      claim: 'better than RoPE past L_train (Sun et al. 2022)',
      usedBy: 'TorchScale (Sun et al. 2022, "A Length-Extrapolatable Transformer")' },
    where: { label: 'xPos', stage: 3, group: 'rotary' },
  },
  {
    id: 'kerple_log', name: 'KERPLE (log)',
    compare: { how: 'adds −r₁·log(1 + r₂·distance) to scores, r₁, r₂ learned',
      relative: 'yes: a learned function of the distance',
      params: (st) => ({ formula: `2 × heads = 2 × ${st.heads}`, value: 2 * st.heads }),
      claim: 'better than ALiBi past L_train (Chi et al. 2022)',
      usedBy: 'Chi et al. 2022, "KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation"' },
    where: { label: 'KERPLE', stage: 4, group: 'bias' },
  },
  {
    id: 'kerple_power', name: 'KERPLE (power)',
    compare: { how: 'adds −r₁·distance^r₂ to scores, 0 < r₂ < 2, learned',
      relative: 'yes: a learned function of the distance',
      params: (st) => ({ formula: `2 × heads = 2 × ${st.heads}`, value: 2 * st.heads }),
      claim: 'close to the log variant (Chi et al. 2022)',
      usedBy: 'Chi et al. 2022' },
  },
  {
    id: 'fire', name: 'FIRE',
    compare: { how: 'adds an MLP of the distance over log(1 + c·max(L, i)) to scores',
      relative: 'yes, progressively: a learned function of the distance, scaled to [0, 1] per query',
      params: (st) => ({ formula: `per layer: 32 × (heads + 2) + 2 = 32 × ${st.heads + 2} + 2`, value: 32 * (st.heads + 2) + 2 }),
      claim: 'claimed better past L_train than T5, ALiBi and KERPLE (Li et al. 2023)',
      usedBy: 'Li et al. 2023, "Functional Interpolation for Relative Positions Improves Long Context Transformers"' },
    where: { label: 'FIRE', stage: 4, group: 'bias' },
  },
  {
    id: 'cope', name: 'CoPE',
    compare: { how: 'adds q·e[p] to scores, p = Σ σ(q·k) counted back from the query',
      relative: 'yes, by content: p counts the keys the gates open, not the tokens',
      params: (st) => ({ formula: `per layer: (P + 1) × d_model = 65 × ${st.dModel} (P = 64, the lab's T_train)`,
        value: 65 * st.dModel }),
      claim: 'claimed to count and copy where RoPE fails, and to extrapolate (Golovneva et al. 2024)',
      usedBy: 'Golovneva et al. 2024, "Contextual Position Encoding: Learning to Count What\'s Important"' },
  },
  {
    id: 'p_rope', name: 'p-RoPE',
    compare: { how: 'rotates q and k as RoPE in its highest 75 % of frequencies; the lowest pairs stay unrotated',
      relative: 'yes: q·k depends only on m − n',
      params: () => ({ formula: '0 (θᵢ fixed, p = 0.75)', value: 0 }),
      claim: 'claimed: the lowest frequencies carry meaning, not position; dropping them helps (Barbero et al. 2024)',
      usedBy: 'Gemma\'s code (apply_rope\'s rope_proportion); HF\'s "proportional" RoPE' },
  },
  // The mixed-layer schemes: a pattern of position handling per layer (docs/lab.md's card; in the
  // lab with 2 layers, layer 0 is the local one and layer 1 the global one).
  {
    id: 'irope', name: 'iRoPE (Llama 4)',
    compare: { how: 'RoPE on three layers of four; the fourth has no positions and scales its queries by log(⌊(pos + 1) / s⌋ + 1)·0.1 + 1',
      relative: 'on the RoPE layers; the NoPE layers see positions only through the causal mask and the temperature',
      params: () => ({ formula: '0 (θ, floor scale and attn scale fixed)', value: 0 }),
      claim: 'claimed to extend context past training (Meta\'s Llama 4 release)',
      usedBy: 'Llama 4 Scout and Maverick (no_rope_layers, attn_temperature_tuning)' },
  },
  {
    id: 'nope_interval', name: 'RoPE + NoPE layers (SmolLM3)',
    compare: { how: 'RoPE on three layers of four, no positions at all on the fourth',
      relative: 'on the RoPE layers; none on the NoPE layers',
      params: () => ({ formula: '0 (θ fixed)', value: 0 }),
      claim: 'claimed to help long context without hurting short (SmolLM3\'s report)',
      usedBy: 'SmolLM3 (no_rope_layer_interval 4)' },
  },
  {
    id: 'gemma3', name: 'local + global RoPE (Gemma 3)',
    compare: { how: 'RoPE θ 10⁴ in a sliding window on five layers of six, RoPE θ 10⁶ over the whole context on the sixth',
      relative: 'yes: q·k depends only on m − n in every layer',
      params: () => ({ formula: '0 (both θ and the window fixed)', value: 0 }),
      claim: 'claimed: local layers keep the KV cache small, the global θ 10⁶ carries long context (Gemma Team 2025)',
      usedBy: 'Gemma 3 (layer_types, rope_local_base_freq, sliding_window)' },
  },
  {
    id: 'swa_rope_nope', name: 'windowed RoPE + global NoPE',
    compare: { how: 'RoPE in a sliding window on three layers of four, no positions over the whole context on the fourth',
      relative: 'on the windowed layers; none on the global ones',
      params: () => ({ formula: '0 (θ and the window fixed)', value: 0 }),
      claim: 'claimed: the windowed RoPE layers never see a distance past the window, so length does not break them',
      usedBy: 'Cohere\'s Command A (Cohere2: sliding_window_pattern 4, RoPE on the sliding layers only)' },
  },
];

/** The entry of a scheme id. */
export const pageScheme = (id) => PAGE_SCHEMES.find((s) => s.id === id);
