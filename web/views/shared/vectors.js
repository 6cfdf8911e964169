// The seeded random vectors some views use as word "content", repeated across positions, the
// products of rows every score and similarity map is made of, and the check that a score matrix
// depends only on the offset. No encoding is computed here: those all come from the posenc package.

/** Seeded N(0, std²) vectors [n][d] from the package's initializer (the learned-table one). */
export function seededVectors(pe, n, d, seed, std = 1) {
  return pe.learnedTable(n, d, { seed, std }).weights;
}

/** n copies of vector x, one after another (the same content at n positions). */
export function tile(x, n) {
  const out = new Float32Array(n * x.length);
  for (let i = 0; i < n; i++) out.set(x, i * x.length);
  return out;
}

/** Largest change along any diagonal of an n × n matrix (0 when every diagonal is constant). */
export function diagonalSpread(values, n) {
  let spread = 0;
  for (let i = 0; i + 1 < n; i++) {
    for (let j = 0; j + 1 < n; j++) spread = Math.max(spread, Math.abs(values[i * n + j] - values[(i + 1) * n + j + 1]));
  }
  return spread;
}

// The page's matrix products, each one loop for every view: the browser compiles a loop when it has
// run it a while, so a loop of each view's own ran uncompiled in that view's first drawing (a long
// task; docs/explorer.md), where a shared one is compiled by the first view that draws. Sums in
// float64 with k in order, so a view gets the numbers its own loop gave.

/**
 * Products of rows: out[i·m + j] = Σ_k a[i·d + k]·b[j·d + k] for a [n][d] and b [m][d] (A·Bᵀ), as a
 * Float64Array [n][m]. With b === a and m === n each pair is summed once.
 */
export function dotRows(a, b, n, m, d) {
  const out = new Float64Array(n * m);
  const same = a === b && n === m;
  for (let i = 0; i < n; i++) {
    for (let j = same ? i : 0; j < m; j++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += a[i * d + k] * b[j * d + k];
      out[i * m + j] = s;
      if (same) out[j * m + i] = s;
    }
  }
  return out;
}

/**
 * rows [n][d] times rows r0 … r0 + d − 1 of w [·][m] (the rows of a taller w that multiply them):
 * out[i·m + c] = Σ_k rows[i·d + k]·w[(r0 + k)·m + c], a Float64Array [n][m].
 */
export function project(rows, n, d, w, m, r0 = 0) {
  const out = new Float64Array(n * m);
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < m; c++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += rows[i * d + k] * w[(r0 + k) * m + c];
      out[i * m + c] = s;
    }
  }
  return out;
}
