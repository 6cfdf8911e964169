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
    // HF's LongRoPE factor is max_position_embeddings / original: L_target / L_train here.
    Object.assign(s, { originalMaxPositionEmbeddings: st.lTrain, maxPositionEmbeddings: st.lTarget,
      shortFactor: f.shortFactor, longFactor: f.longFactor });
    if (file?.contextLength) s.contextLength = file.contextLength;
  }
  return { ...base, scaling: s };
}

/** RoPE needs pairs: the rule, worded for a learner, or '' when d_model is fine. */
export function ropeRule(st) {
  if (st.dModel % 2 === 0) return '';
  return `RoPE turns dimensions in pairs, so head_dim (d_model here) must be even; ${st.dModel} is odd. `
    + 'Choose an even d_model in the settings.';
}

/**
 * NTK's base for the settings, read back from the package's frequencies (pair 1 turns base'^(−2/d)
 * per position), beside the formula θ·s^(d/(d−2)); d is the rotary width. { d, base, formula }.
 */
export function ntkBase(pe, st, extras, invFreq = pe.ropeFrequencies(ropeParams(st, extras, 'ntk'), { dtype: 'float64' }).invFreq) {
  const d = 2 * invFreq.length;
  return { d, base: d > 2 ? invFreq[1] ** (-d / 2) : NaN, formula: st.theta * st.factor ** (d / (d - 2)) };
}
