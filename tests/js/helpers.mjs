// Shared by the node:test suites: one loaded module, seeded random data, comparisons.
import { init } from 'posenc';

export const pe = await init();

export function randomFloats(n, seed = 1) {
  // mulberry32: a tiny seeded generator, so failures reproduce.
  let a = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`length ${a.length} != ${b.length}`);
  let worst = 0;
  for (let k = 0; k < a.length; k++) worst = Math.max(worst, Math.abs(a[k] - b[k]));
  return worst;
}

/** assert.throws matcher: the error class and a message pattern. */
export function error(type, pattern) {
  return (e) => {
    if (!(e instanceof type)) throw new Error(`expected ${type.name}, got ${e?.constructor?.name}: ${e?.message}`);
    if (!pattern.test(e.message)) throw new Error(`message ${JSON.stringify(e.message)} does not match ${pattern}`);
    return true;
  };
}
