// The wavelength of a sinusoidal dimension (positions per turn, 2π / ω), with ω read off the
// package's own row at position 1: the sine of the dimension's pair there is sin ω (ω ≤ 1 rad),
// whichever layout spreads the pairs (interleaved: base^(−2i/d); concat, tensor2tensor's:
// base^(−i/(d/2 − 1))). Shared by dim-traces and the sinusoidal chapter's guided step, as is the
// way they print one.

/** The wavelengths of `dims` (each below st.dModel) at st's d_model, base and sinLayout. */
export function wavelengths(pe, st, dims) {
  const row1 = pe.sinusoidal(2, st.dModel, { base: st.base, layout: st.sinLayout }).subarray(st.dModel);
  const sines = Math.ceil(st.dModel / 2);
  const sineOf = (dim) => (st.sinLayout === 'concat' ? (dim < sines ? dim : dim - sines) : dim - (dim % 2));
  return dims.map((dim) => (2 * Math.PI) / Math.asin(row1[sineOf(dim)]));
}

/** A wavelength as the page prints it: one decimal below 100, whole below 10^7, else in exponent form. */
export const wavelengthText = (w) => (!Number.isFinite(w) ? '—'
  : w < 100 ? w.toFixed(1) : w < 1e7 ? Math.round(w).toLocaleString('en-US') : w.toExponential(2));
