// Straightforward plain-JS versions of the benchmarked ops: what a JS developer would write
// without posenc (float64 arithmetic into Float32Arrays, no tricks).

/** x [S][H][D] rotated half-split by theta^(-2i/D) at positions 0 … S-1; a new array. */
export function ropePlain(x, S, H, D, theta = 10000) {
  const half = D / 2;
  const cos = new Float64Array(S * half), sin = new Float64Array(S * half);
  for (let s = 0; s < S; s++) {
    for (let i = 0; i < half; i++) {
      const a = s * theta ** ((-2 * i) / D);
      cos[s * half + i] = Math.cos(a);
      sin[s * half + i] = Math.sin(a);
    }
  }
  const y = new Float32Array(x.length);
  for (let s = 0; s < S; s++) {
    for (let h = 0; h < H; h++) {
      const o = (s * H + h) * D;
      for (let i = 0; i < half; i++) {
        const c = cos[s * half + i], sn = sin[s * half + i], a = x[o + i], b = x[o + i + half];
        y[o + i] = a * c - b * sn;
        y[o + i + half] = b * c + a * sn;
      }
    }
  }
  return y;
}

/**
 * RoPE as an onnxruntime user holds the inputs: X [1, H, S, D] heads major, the cos/sin cache
 * [maxPos][D/2] given, position ids (BigInt64Array) — the loop they would write. `out`: their array.
 */
export function ropePlainCached(x, cos, sin, ids, S, H, D, out = new Float32Array(x.length)) {
  const half = D / 2;
  for (let h = 0; h < H; h++) {
    for (let s = 0; s < S; s++) {
      const row = Number(ids[s]) * half, o = (h * S + s) * D;
      for (let i = 0; i < half; i++) {
        const c = cos[row + i], sn = sin[row + i], a = x[o + i], b = x[o + i + half];
        out[o + i] = a * c - b * sn;
        out[o + i + half] = b * c + a * sn;
      }
    }
  }
  return out;
}

/** Causal attention, q/k/v [S][H][D] → [S][H][D]; optional ALiBi slopes [H]. */
export function attentionPlain(q, k, v, S, H, D, slopes = null) {
  const y = new Float32Array(q.length);
  const scale = 1 / Math.sqrt(D);
  const s = new Float64Array(S);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < S; i++) {
      let m = -Infinity;
      for (let j = 0; j <= i; j++) {
        let dot = 0;
        for (let d = 0; d < D; d++) dot += q[(i * H + h) * D + d] * k[(j * H + h) * D + d];
        s[j] = dot * scale - (slopes ? slopes[h] * (i - j) : 0);
        if (s[j] > m) m = s[j];
      }
      let l = 0;
      for (let j = 0; j <= i; j++) l += (s[j] = Math.exp(s[j] - m));
      const o = (i * H + h) * D;
      for (let j = 0; j <= i; j++) {
        const p = s[j] / l;
        for (let d = 0; d < D; d++) y[o + d] += p * v[(j * H + h) * D + d];
      }
    }
  }
  return y;
}

/** The sinusoidal table [S][D], interleaved. */
export function sinusoidalPlain(S, D, base = 10000) {
  const out = new Float32Array(S * D);
  for (let p = 0; p < S; p++) {
    for (let i = 0; i < D; i += 2) {
      const a = p / base ** (i / D);
      out[p * D + i] = Math.sin(a);
      out[p * D + i + 1] = Math.cos(a);
    }
  }
  return out;
}
