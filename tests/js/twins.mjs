// Float64 twins written from the definitions, for the suites that check posenc against them.

/**
 * Attention in float64: q [qLen][H][D], k/v [kvLen][Hkv][D] → [qLen][H][D]. Query i sits at
 * qPositions[i] (default: the last qLen positions, kvLen - qLen + i), key j at kPositions[j]
 * (default j); the first sinkTokens keys stay visible beside a window (StreamingLLM). terms: the
 * positional bias terms, each (h, qpos, kpos) → the score it adds, written by the scheme's suite
 * (alibi.test.mjs, t5.test.mjs, through bias_terms.mjs); mask: [qLen][kvLen] added.
 */
export function attentionTwin(q, k, v, { nHeads: H, nKvHeads: Hkv = H, headDim: D, causal = false, terms = [], mask, scale,
  softcap = 0, window, sinkTokens = 0, sinks, qPositions, kPositions }) {
  const qLen = q.length / (H * D), kvLen = k.length / (Hkv * D);
  const sc = scale ?? 1 / Math.sqrt(D);
  const out = new Float64Array(q.length);
  for (let h = 0; h < H; h++) {
    const g = Math.floor(h / (H / Hkv));
    for (let i = 0; i < qLen; i++) {
      const qpos = qPositions ? qPositions[i] : kvLen - qLen + i;
      const s = new Float64Array(kvLen);
      let m = -Infinity;
      for (let j = 0; j < kvLen; j++) {
        const kpos = kPositions ? kPositions[j] : j;
        let dot = 0;
        for (let d = 0; d < D; d++) dot += q[(i * H + h) * D + d] * k[(j * Hkv + g) * D + d];
        let x = dot * sc;
        if (softcap > 0) x = softcap * Math.tanh(x / softcap);
        for (const term of terms) x += term(h, qpos, kpos);
        if (mask) x += mask[i * kvLen + j];
        if (causal && kpos > qpos) x = -Infinity;
        // HF sliding_window_overlay: kv_idx > q_idx - window (not causal: |q - kv| < window).
        if (window && j >= sinkTokens && !(kpos > qpos - window)) x = -Infinity;
        if (window && j >= sinkTokens && !causal && !(kpos < qpos + window)) x = -Infinity;
        s[j] = x;
        m = Math.max(m, x);
      }
      if (sinks) m = Math.max(m, sinks[h]);  // gpt-oss: the sink logit joins the row, then is dropped
      if (m === -Infinity) continue;
      let l = sinks ? Math.exp(sinks[h] - m) : 0;
      for (let j = 0; j < kvLen; j++) l += (s[j] = Math.exp(s[j] - m));
      for (let j = 0; j < kvLen; j++) for (let d = 0; d < D; d++) out[(i * H + h) * D + d] += (s[j] / l) * v[(j * Hkv + g) * D + d];
    }
  }
  return out;
}
