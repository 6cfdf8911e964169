// T5's relative buckets (docs/schemes/t5.md; cpp/src/t5.cpp): buckets and biases, and T5 as a
// positional bias term of pe.attention and kvCache.attend (their `t5` option).
import {
  PosencRangeError, checkBool, checkElements, checkFloat32Array, checkInt, checkOptions, checkQueryOffset, jsMessageWith, numberOrBigint,
  toFloat64
} from './checks.js';

const BUCKET_OPTIONS = ['bidirectional', 'numBuckets', 'maxDistance'];
// numBuckets and maxDistance cross into C++ as int32.
const INT32 = [-(2 ** 31), 2 ** 31 - 1];

/**
 * The bucket settings (names under `prefix`, as 't5.' in the attention option): their JS types
 * here, their rules C++'s (t5_check), asked through `status` (heap.js) before anything is allocated.
 */
function checkBuckets(module, status, fn, { bidirectional, numBuckets, maxDistance }, prefix = '') {
  checkBool(fn, `${prefix}bidirectional`, bidirectional);
  checkInt(fn, `${prefix}numBuckets`, numBuckets, ...INT32);
  checkInt(fn, `${prefix}maxDistance`, maxDistance, ...INT32);
  status(fn, module.t5Check(bidirectional, numBuckets, maxDistance), {
    values: { [`${prefix}numBuckets`]: numBuckets, [`${prefix}maxDistance`]: maxDistance },
    names: jsMessageWith({ num_buckets: `${prefix}numBuckets`, max_distance: `${prefix}maxDistance` }),
  });
}

/** A table is [numBuckets][nHeads]. */
function checkTable(fn, name, table, numBuckets, nHeads) {
  if (table.length !== numBuckets * nHeads) {
    throw new PosencRangeError(`${fn}: ${name}.length must equal numBuckets * nHeads = ${numBuckets * nHeads} (got ${table.length})`);
  }
}

export function t5Api(module, heap) {
  const { scoped, i32, copyOut, status } = heap;

  /** options.t5: { table [numBuckets][nHeads], bidirectional = !causal, numBuckets, maxDistance }, or null. */
  function t5Option(fn, t5, nHeads, causal) {
    if (t5 === undefined) return null;
    // HF's T5Config defaults: 32 buckets, max distance 128.
    const { table, bidirectional = !causal, numBuckets = 32, maxDistance = 128 } = checkOptions(fn, t5,
      ['table', ...BUCKET_OPTIONS], 't5');
    checkFloat32Array(fn, 't5.table', table);
    checkBuckets(module, status, fn, { bidirectional, numBuckets, maxDistance }, 't5.');
    checkTable(fn, 't5.table', table, numBuckets, nHeads);
    return { table, bidirectional, numBuckets, maxDistance };
  }

  return {
    // Its term (C++ PositionBias::t5_table, t5), for js/attention.js positionBiasOption: the table
    // goes to the heap; embind_t5.cpp reads its address from `t5Table` (0: off) and, when on, the
    // bucket settings from the other fields.
    term: { option: 't5', keys: (fn, value) => checkOptions(fn, value, ['table', ...BUCKET_OPTIONS], 't5'), parse(fn, value, nHeads, causal) {
      const t5 = t5Option(fn, value, nHeads, causal);
      return { table: t5 ? t5.table : null, fields: (t5Table) => (t5 ? { t5Table, t5Bidirectional: t5.bidirectional,
        t5NumBuckets: t5.numBuckets, t5MaxDistance: t5.maxDistance } : { t5Table }) };
    } },
    api: {
      t5Bucket(relativePosition, options) {
        const fn = 't5Bucket';
        const { bidirectional = true, numBuckets = 32, maxDistance = 128 } = checkOptions(fn, options, BUCKET_OPTIONS);
        checkBuckets(module, status, fn, { bidirectional, numBuckets, maxDistance });
        const single = typeof relativePosition === 'number' || typeof relativePosition === 'bigint';
        const rel = single ? toFloat64(fn, 'relativePosition', [numberOrBigint(fn, 'relativePosition', relativePosition)], { integer: true })
          : toFloat64(fn, 'relativePosition', relativePosition, { integer: true });
        checkElements(fn, 'relativePosition.length', rel.length);
        return scoped(fn, (alloc, put) => {
          const out = alloc(Math.max(1, rel.length) * 4);
          const r = put(rel, Float64Array);
          status(fn, module.t5Buckets(out, r, rel.length, bidirectional, numBuckets, maxDistance));
          const buckets = i32(out, rel.length).slice();
          return single ? buckets[0] : buckets;
        });
      },

      t5Bias(table, nHeads, qLen, kLen, options) {
        const fn = 't5Bias';
        const { bidirectional = true, numBuckets = 32, maxDistance = 128, queryOffset } = checkOptions(fn, options,
          [...BUCKET_OPTIONS, 'queryOffset']);
        checkFloat32Array(fn, 'table', table);
        checkInt(fn, 'nHeads', nHeads, 1);
        checkInt(fn, 'qLen', qLen, 1);
        checkInt(fn, 'kLen', kLen, 1);
        checkBuckets(module, status, fn, { bidirectional, numBuckets, maxDistance });
        const qOffset = checkQueryOffset(fn, queryOffset, qLen, kLen);
        checkTable(fn, 'table', table, numBuckets, nHeads);
        const n = nHeads * qLen * kLen;
        checkElements(fn, 'nHeads * qLen * kLen', n);
        return scoped(fn, (alloc, put) => {
          const out = alloc(n * 4);
          const t = put(table);
          status(fn, module.t5Bias(out, t, nHeads, qLen, kLen, bidirectional, numBuckets, maxDistance, qOffset));
          return copyOut(out, n);
        });
      },
    },
  };
}
