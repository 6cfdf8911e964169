// The RoPE parameters the settings describe, as the package takes them (ropeFrequencies,
// applyRope, attention): unscaled for the rope chapter, or with one of the long-context scalings,
// plus what a model file adds (freq_factors, LongRoPE's context) while its sizes are on the page.

/**
 * A model file's extra RoPE inputs (freq_factors, LongRoPE's context length) apply while d_model
 * and partial rotary are still the file's.
 */
export function fileRope(st, extras) {
  const r = extras.ropeFile;
  return r && r.headDim === st.dModel && r.partial === st.partial ? r : null;
}

/**
 * The RoPE parameters of the settings, unscaled (the rope chapter) or with a scaling; `own`: the
 * model's own frequencies, with what a model file adds (fileRope).
 */
export function ropeParams(st, extras, scaling = 'none', own = false) {
  const base = { headDim: st.dModel, theta: st.theta, partialRotaryFactor: st.partial };
  const file = own ? fileRope(st, extras) : null;
  if (file?.freqFactors) base.freqFactors = file.freqFactors;
  const s = { type: scaling };
  const factor = st.factor;
  if (scaling === 'none') return base;
  if (scaling === 'linear' || scaling === 'ntk') s.factor = factor;
  if (scaling === 'dynamic') Object.assign(s, { factor, maxPositionEmbeddings: st.lTrain });
  if (scaling === 'yarn') {
    Object.assign(s, { factor, originalMaxPositionEmbeddings: st.lTrain, betaFast: st.betaFast, betaSlow: st.betaSlow,
      truncate: st.truncate });
  }
  if (scaling === 'llama3') {
    Object.assign(s, { factor, originalMaxPositionEmbeddings: st.lTrain, lowFreqFactor: st.lowFreq,
      highFreqFactor: st.highFreq });
  }
  if (scaling === 'longrope') {
    const f = extras.longFactors;
    if (!f) throw new Error('LongRoPE needs its per-pair factors: choose the Phi-3.5 model or paste a LongRoPE config.');
    // The model's factors are per pair of its own rotated width: d_model or partial changed since, they no longer fit.
    const pairs = rotaryWidth(st) / 2;
    if (f.shortFactor.length !== pairs) {
      throw new Error(`LongRoPE's per-pair factors came with the model: ${f.shortFactor.length} pairs, and these settings `
        + `rotate ${pairs} (d_model ${st.dModel} × partial rotary ${st.partial}). Choose the model again for its own sizes.`);
    }
    // HF's LongRoPE factor is max_position_embeddings / original: L_target / L_train here.
    Object.assign(s, { originalMaxPositionEmbeddings: st.lTrain, maxPositionEmbeddings: st.lTarget,
      shortFactor: f.shortFactor, longFactor: f.longFactor });
    if (file?.contextLength) s.contextLength = file.contextLength;
  }
  return { ...base, scaling: s };
}

/** The rotated width: HF's int(head_dim × partial_rotary_factor), as the package takes it. */
export const rotaryWidth = (st) => Math.trunc(st.dModel * st.partial);
// RoPE turns pairs: a rotated width it can take, and why another is refused (the words every rule
// on the rotated width shares).
const inPairs = (rot) => rot >= 2 && rot % 2 === 0;
const oddWidth = (rot) => `rotates ${rot} dimension${rot === 1 ? '' : 's'} (rounded down, as HF does), and RoPE turns `
  + 'pairs: it must rotate an even number, at least 2';

/**
 * A partial rotary near v that rotates an even width of d_model, at least 2, as HF truncates the
 * product (0.58 × 100 is 57.99…, so 57): the even width nearest d_model × v, as r / d_model if that
 * gives it back, else rounded to 4 digits, else half a dimension past it.
 */
export function evenPartial(v, dModel) {
  const r = Math.max(2, 2 * Math.round((dModel * v) / 2));
  return [r / dModel, +(r / dModel).toPrecision(4), +((r + 0.5) / dModel).toPrecision(4)]
    .find((c) => c <= 1 && Math.trunc(dModel * c) === r) ?? 1;
}

/** The partial rotary box's rule at d_model (an odd d_model has its own), or '' when v is fine. */
export function partialRule(v, st) {
  const rot = rotaryWidth({ dModel: st.dModel, partial: v });
  if (st.dModel % 2 || inPairs(rot)) return '';
  return `partial rotary: ${v} × d_model ${st.dModel} ${oddWidth(rot)}, e.g. ${evenPartial(v, st.dModel)}`;
}

/**
 * An even d_model near d (at most 4096, the box's maximum) whose rotated width at partial rotary
 * `partial` is even and at least 2, nearest first; d itself when none is.
 */
export function evenDModel(d, partial) {
  const start = Math.max(2, 2 * Math.round(d / 2));
  for (let k = 0; k <= 4096; k += 2) {
    for (const c of [start - k, start + k]) if (c >= 2 && c <= 4096 && inPairs(rotaryWidth({ dModel: c, partial }))) return c;
  }
  return d;
}

/**
 * The d_model box's rule under the partial rotary already set (name: the box's label, d_model or
 * head_dim; an odd v has its own rule), or '' when v is fine: the rotated width must stay even.
 */
export function dModelRule(v, st, name = 'd_model') {
  const rot = rotaryWidth({ dModel: v, partial: st.partial });
  if (v % 2 || inPairs(rot)) return '';
  const near = evenDModel(v, st.partial);
  return `${name}: ${v} × partial rotary ${st.partial} ${oddWidth(rot)}${near === v ? '' : `, e.g. ${name} ${near}`}, `
    + 'or change partial rotary (the RoPE chapter\'s settings)';
}

/**
 * What the package refuses in the settings, as a rule worded for a learner (or '' when they are
 * fine), for the unscaled frequencies and each of `scalings` (default: the settings' own): RoPE
 * turns pairs, so d_model and the rotated width must be even, the width at least 2 and, for NTK and
 * dynamic NTK (θ·s^(d/(d−2))), above 2; llama3's high_freq_factor may not be below its low one.
 */
export function ropeRule(st, ...scalings) {
  const asked = scalings.length ? scalings : [st.scaling];
  if (st.dModel % 2) {
    return `RoPE turns dimensions in pairs, so head_dim (d_model here) must be even; ${st.dModel} is odd. `
      + 'Choose an even d_model in the settings.';
  }
  const rot = rotaryWidth(st);
  if (!inPairs(rot)) {
    return `partial rotary ${st.partial} × head_dim ${st.dModel} ${oddWidth(rot)}. Choose another partial rotary or d_model.`;
  }
  const ntk = asked.find((x) => x === 'ntk' || x === 'dynamic');
  if (ntk && rot === 2) {
    return `${ntk === 'ntk' ? 'NTK' : 'Dynamic NTK'} raises θ to θ·s^(d/(d−2)) for the rotated width d, so it needs d `
      + 'above 2; these settings rotate 2 dimensions. Choose a larger d_model or partial rotary.';
  }
  if (asked.includes('llama3') && !(st.highFreq >= st.lowFreq)) {
    return `llama3's high_freq_factor (${st.highFreq}) may not be below its low_freq_factor (${st.lowFreq}): wavelengths `
      + 'under L_train / high_freq_factor are kept and those over L_train / low_freq_factor divided, so the first '
      + 'bound must not be above the second.';
  }
  return '';
}

/**
 * NTK's base for the settings, read back from the package's frequencies (pair 1 turns base'^(−2/d)
 * per position), beside the formula θ·s^(d/(d−2)); d is the rotary width. { d, base, formula }.
 */
export function ntkBase(pe, st, extras, invFreq = pe.ropeFrequencies(ropeParams(st, extras, 'ntk'), { dtype: 'float64' }).invFreq) {
  const d = 2 * invFreq.length;
  return { d, base: d > 2 ? invFreq[1] ** (-d / 2) : NaN, formula: st.theta * st.factor ** (d / (d - 2)) };
}
