// Attention heads as the bias views draw them (ALiBi's slopes, chapter "bias" and "comparison").

/** ALiBi's heads, steepest slope first (with a head count not a power of two the extra heads interleave). */
export function headsBySlope(slopes) {
  return Array.from(slopes.keys()).sort((a, b) => slopes[b] - slopes[a] || a - b);
}
