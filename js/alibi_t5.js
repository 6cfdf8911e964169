// ALiBi slopes and biases, T5 buckets and biases (cpp/src/alibi.cpp, t5.cpp), and the two as
// positional bias terms of pe.attention and kvCache.attend (their `alibi` and `t5` options).
import {
  PosencRangeError, checkBool, checkElements, checkFinite, checkFloat32Array, checkInt, checkOptions,
  toFloat64
} from './checks.js';

// The bias terms (C++ PositionBias), for js/attention.js positionBiasOption: option, its name in
// the options; parse(fn, value, nHeads, causal) → { table: the Float32Array to put in the heap, or
// null; fields(address): what embind's position_bias reads for it } (value undefined: the term is off).
function biasTerms(alibiSlopes) {
  /** alibi: true (max bias 8), { maxBias }, or the slopes → Float32Array [nHeads], or null. */
  function alibiTable(fn, alibi, nHeads) {
    if (alibi === undefined || alibi === false) return null;
    if (alibi instanceof Float32Array) {
      if (alibi.length !== nHeads) throw new PosencRangeError(`${fn}: alibi slopes must have nHeads = ${nHeads} entries (got ${alibi.length})`);
      return alibi;
    }
    const { maxBias = 8 } = alibi === true ? {} : checkOptions(fn, alibi, ['maxBias'], 'alibi');
    return alibiSlopes(nHeads, checkFinite(fn, 'alibi.maxBias', maxBias, { positive: true }));
  }
  /** t5: { table [numBuckets][nHeads], bidirectional = !causal, numBuckets, maxDistance }, or null. */
  function t5Settings(fn, t5, nHeads, causal) {
    if (t5 === undefined) return null;
    const { table, bidirectional = !causal, numBuckets = 32, maxDistance = 128 } = checkOptions(fn, t5,
      ['table', 'bidirectional', 'numBuckets', 'maxDistance'], 't5');
    checkFloat32Array(fn, 't5.table', table);
    checkBool(fn, 't5.bidirectional', bidirectional);
    checkInt(fn, 't5.numBuckets', numBuckets, 1, 2 ** 30);
    checkInt(fn, 't5.maxDistance', maxDistance, 1, 2 ** 30);
    if (table.length !== numBuckets * nHeads) {
      throw new PosencRangeError(`${fn}: t5.table.length must equal numBuckets * nHeads = ${numBuckets * nHeads} (got ${table.length})`);
    }
    return { table, bidirectional, numBuckets, maxDistance };
  }
  return [
    { option: 'alibi', parse: (fn, alibi, nHeads) => ({ table: alibiTable(fn, alibi, nHeads), fields: (alibiSlopes) => ({ alibiSlopes }) }) },
    { option: 't5', parse(fn, value, nHeads, causal) {
      const t5 = t5Settings(fn, value, nHeads, causal);
      return { table: t5 ? t5.table : null, fields: (t5Table) => ({ t5Table, t5Bidirectional: t5 ? t5.bidirectional : true,
        t5NumBuckets: t5 ? t5.numBuckets : 32, t5MaxDistance: t5 ? t5.maxDistance : 128 }) };
    } },
  ];
}

export function alibiT5Api(module, heap) {
  const { scoped, i32, copyOut, status } = heap;
  function alibiSlopes(nHeads, maxBias) {
    return scoped('alibiSlopes', (alloc) => {
      const out = alloc(nHeads * 4);
      status('alibiSlopes', module.alibiSlopes(out, nHeads, maxBias));
      return copyOut(out, nHeads);
    });
  }

  // options.queryOffset of alibiBias/t5Bias: the key position of query 0 (NaN: kLen - qLen).
  function resolveQueryOffset(fn, queryOffset, qLen, kLen) {
    if (queryOffset === undefined) {
      if (qLen > kLen) {
        throw new PosencRangeError(`${fn}: qLen = ${qLen} must be <= kLen = ${kLen} when the queries sit at the last key positions (the default); pass queryOffset`);
      }
      return NaN;
    }
    return checkInt(fn, 'queryOffset', queryOffset, 0, 2 ** 52);
  }

  return {
    terms: biasTerms(alibiSlopes),
    api: {
      alibiSlopes(nHeads, options) {
        const fn = 'alibiSlopes';
        checkInt(fn, 'nHeads', nHeads, 1, 1 << 20);
        const { maxBias = 8 } = checkOptions(fn, options, ['maxBias']);
        checkFinite(fn, 'maxBias', maxBias, { positive: true });
        return alibiSlopes(nHeads, maxBias);
      },
  
      alibiBias(nHeads, qLen, kLen, options) {
        const fn = 'alibiBias';
        checkInt(fn, 'nHeads', nHeads, 1);
        checkInt(fn, 'qLen', qLen, 1);
        checkInt(fn, 'kLen', kLen, 1);
        const { causal = true, maxBias = 8, queryOffset } = checkOptions(fn, options, ['causal', 'maxBias', 'queryOffset']);
        checkBool(fn, 'causal', causal);
        checkFinite(fn, 'maxBias', maxBias, { positive: true });
        const qOffset = resolveQueryOffset(fn, queryOffset, qLen, kLen);
        const n = nHeads * qLen * kLen;
        checkElements(fn, 'nHeads * qLen * kLen', n);
        return scoped(fn, (alloc) => {
          const out = alloc(n * 4);
          status(fn, module.alibiBias(out, nHeads, qLen, kLen, causal, maxBias, qOffset));
          return copyOut(out, n);
        });
      },
  
      t5Bucket(relativePosition, options) {
        const fn = 't5Bucket';
        const { bidirectional = true, numBuckets = 32, maxDistance = 128 } = checkOptions(fn, options,
          ['bidirectional', 'numBuckets', 'maxDistance']);
        checkBool(fn, 'bidirectional', bidirectional);
        checkInt(fn, 'numBuckets', numBuckets, 1, 2 ** 30);
        checkInt(fn, 'maxDistance', maxDistance, 1, 2 ** 30);
        const single = typeof relativePosition === 'number';
        const rel = single ? toFloat64(fn, 'relativePosition', [relativePosition], { integer: true })
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
        checkFloat32Array(fn, 'table', table);
        checkInt(fn, 'nHeads', nHeads, 1);
        checkInt(fn, 'qLen', qLen, 1);
        checkInt(fn, 'kLen', kLen, 1);
        const { bidirectional = true, numBuckets = 32, maxDistance = 128, queryOffset } = checkOptions(fn, options,
          ['bidirectional', 'numBuckets', 'maxDistance', 'queryOffset']);
        checkBool(fn, 'bidirectional', bidirectional);
        checkInt(fn, 'numBuckets', numBuckets, 1, 2 ** 30);
        checkInt(fn, 'maxDistance', maxDistance, 1, 2 ** 30);
        const qOffset = resolveQueryOffset(fn, queryOffset, qLen, kLen);
        if (table.length !== numBuckets * nHeads) {
          throw new PosencRangeError(`${fn}: table.length must equal numBuckets * nHeads = ${numBuckets * nHeads} (got ${table.length})`);
        }
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
