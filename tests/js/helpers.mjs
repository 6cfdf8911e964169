// Shared by the node:test suites: one loaded module, seeded random data, comparisons.
// POSENC_TEST_THREADS=n loads the threaded build with n threads (npm test reruns the attention,
// KV cache, RoPE, ALiBi, T5 and conformance suites that way).
import { init } from 'posenc';
import { data } from '../../bench/ops/data.mjs';

export const pe = await init({ threads: Number(process.env.POSENC_TEST_THREADS ?? 1) });
if (pe.threads > 1) console.log(`posenc threads: ${pe.threads} (threaded build)`);

/** Seeded data in [-1, 1) (the benchmark's generator), so failures reproduce. */
export const randomFloats = (n, seed = 1) => data(n, seed);

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`length ${a.length} != ${b.length}`);
  let worst = 0;
  for (let k = 0; k < a.length; k++) worst = Math.max(worst, Math.abs(a[k] - b[k]));
  return worst;
}

/** Rows [from, to) of x, `width` values a row (a token's keys, values or queries). */
export const rows = (x, width, from, to) => x.subarray(from * width, to * width);

/** assert.throws matcher: the error class and a message pattern. */
export function error(type, pattern) {
  return (e) => {
    if (!(e instanceof type)) throw new Error(`expected ${type.name}, got ${e?.constructor?.name}: ${e?.message}`);
    if (!pattern.test(e.message)) throw new Error(`message ${JSON.stringify(e.message)} does not match ${pattern}`);
    return true;
  };
}
