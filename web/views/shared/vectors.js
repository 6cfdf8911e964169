// The seeded random vectors some views use as word "content", repeated across positions, and the
// check that a score matrix depends only on the offset. No encoding is computed here: those all
// come from the posenc package.

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
