// Float64 twins written from the definitions, for the suites that check posenc against them.

/**
 * Attention in float64: q [qLen][H][D], k/v [kvLen][Hkv][D] → [qLen][H][D]. Query i sits at
 * qPositions[i] (default: the last qLen positions, kvLen - qLen + i), key j at kPositions[j]
 * (default j); the first sinkTokens keys stay visible beside a window (StreamingLLM). t5: { table
 * [numBuckets][H], bucket(kpos - qpos) } (the bucket function is checked on its own against HF's).
 */
export function attentionTwin(q, k, v, { nHeads: H, nKvHeads: Hkv = H, headDim: D, causal = false, slopes, mask, scale,
  softcap = 0, window, sinkTokens = 0, sinks, qPositions, kPositions, t5 }) {
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
        if (slopes) x -= slopes[h] * Math.abs(qpos - kpos);
        if (t5) x += t5.table[t5.bucket(kpos - qpos) * H + h];
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

/**
 * One example of each positional bias term (C++ PositionBias) for H heads: `options` as
 * pe.attention and kvCache.attend take it, `twin` as attentionTwin takes it, and `refused`: options
 * both must refuse, [options, error class, message]. The attention and KV cache suites check every
 * case, so a new bias term adds its case here beside its twin term. T5's buckets come from
 * pe.t5Bucket, itself checked against HF's buckets (t5.test.mjs).
 */
export function positionBiasCases(pe, H, randomFloats) {
  const table = randomFloats(16 * H, 11);
  const t5 = (bidirectional) => ({
    options: { t5: { table, numBuckets: 16, maxDistance: 32, bidirectional } },
    twin: { t5: { table, bucket: (rel) => pe.t5Bucket(rel, { bidirectional, numBuckets: 16, maxDistance: 32 }) } },
  });
  const nan = Float32Array.from({ length: H }, (_, h) => (h === H - 1 ? NaN : 0.5));
  return [
    { name: 'alibi', options: { alibi: true }, twin: { slopes: pe.alibiSlopes(H) }, refused: [
      [{ alibi: new Float32Array(H + 1) }, RangeError, new RegExp(`alibi slopes must have nHeads = ${H} entries`)],
      [{ alibi: nan }, RangeError, /alibi slopes must be finite/],
      [{ alibi: { maxBias: 0 } }, RangeError, /alibi\.maxBias must be finite and > 0 \(got 0\)/],
      [{ alibi: 'yes' }, TypeError, /alibi must be an object \(got "yes"\)/]] },
    { name: 'alibi maxBias 4', options: { alibi: { maxBias: 4 } }, twin: { slopes: pe.alibiSlopes(H, { maxBias: 4 }) } },
    { name: 't5 decoder', ...t5(false), refused: [
      [{ t5: { table: new Float32Array(3) } }, RangeError, new RegExp(`t5\\.table\\.length must equal numBuckets \\* nHeads = ${32 * H}`)],
      [{ t5: { table: new Float32Array(2 * H), numBuckets: 2, bidirectional: true } }, RangeError, /numBuckets must be >= 4 when bidirectional/],
      [{ t5: { table: new Float32Array(32 * H), bidirectional: 1 } }, TypeError, /t5\.bidirectional must be a boolean/],
      [{ t5: { table: [0] } }, TypeError, /t5\.table must be a Float32Array/]] },
    { name: 't5 encoder, with alibi', options: { ...t5(true).options, alibi: true }, twin: { ...t5(true).twin, slopes: pe.alibiSlopes(H) } },
  ];
}
