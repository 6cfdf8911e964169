// ALiBi (docs/schemes/alibi.md; cpp/src/alibi.cpp): slopes and biases, and ALiBi as a positional
// bias term of pe.attention and kvCache.attend (their `alibi` option).
import {
  PosencRangeError, checkBool, checkElements, checkInt, checkNumber, checkOptions, checkQueryOffset, isPlainObject, jsMessageWith
} from './checks.js';

export function alibiApi(module, heap) {
  const { scoped, copyOut, status } = heap;
  // maxBias's rule is C++'s (alibi_check), asked before anything is allocated; name: its JS name.
  function checkMaxBias(fn, maxBias, name = 'maxBias') {
    checkNumber(fn, name, maxBias);
    status(fn, module.alibiCheck(maxBias), { values: { [name]: maxBias }, names: jsMessageWith({ max_bias: name }) });
    return maxBias;
  }
  function alibiSlopes(nHeads, maxBias) {
    return scoped('alibiSlopes', (alloc) => {
      const out = alloc(nHeads * 4);
      status('alibiSlopes', module.alibiSlopes(out, nHeads, maxBias));
      return copyOut(out, nHeads);
    });
  }

  /** options.alibi: true (max bias 8), { maxBias }, or the slopes → Float32Array [nHeads], or null. */
  function alibiTable(fn, alibi, nHeads) {
    if (alibi === undefined || alibi === false) return null;
    if (alibi instanceof Float32Array) {
      if (alibi.length !== nHeads) throw new PosencRangeError(`${fn}: alibi slopes must have nHeads = ${nHeads} entries (got ${alibi.length})`);
      return alibi;
    }
    const { maxBias = 8 } = alibi === true ? {} : checkOptions(fn, alibi, ['maxBias'], 'alibi');
    return alibiSlopes(nHeads, checkMaxBias(fn, maxBias, 'alibi.maxBias'));
  }

  return {
    // Its term (C++ PositionBias::alibi_slopes), for js/attention.js positionBiasOption: the slopes
    // go to the heap; embind_alibi.cpp reads their address from `alibiSlopes` (0: off).
    term: { option: 'alibi', keys: (fn, alibi) => isPlainObject(alibi) && checkOptions(fn, alibi, ['maxBias'], 'alibi'), parse: (fn, alibi, nHeads) => ({ table: alibiTable(fn, alibi, nHeads), fields: (alibiSlopes) => ({ alibiSlopes }) }) },
    api: {
      alibiSlopes(nHeads, options) {
        const fn = 'alibiSlopes';
        const { maxBias = 8 } = checkOptions(fn, options, ['maxBias']);
        checkInt(fn, 'nHeads', nHeads, 1, 1 << 20);
        checkMaxBias(fn, maxBias);
        return alibiSlopes(nHeads, maxBias);
      },

      alibiBias(nHeads, qLen, kLen, options) {
        const fn = 'alibiBias';
        const { causal = true, maxBias = 8, queryOffset } = checkOptions(fn, options, ['causal', 'maxBias', 'queryOffset']);
        checkInt(fn, 'nHeads', nHeads, 1);
        checkInt(fn, 'qLen', qLen, 1);
        checkInt(fn, 'kLen', kLen, 1);
        checkBool(fn, 'causal', causal);
        checkMaxBias(fn, maxBias);
        const qOffset = checkQueryOffset(fn, queryOffset, qLen, kLen);
        const n = nHeads * qLen * kLen;
        checkElements(fn, 'nHeads * qLen * kLen', n);
        return scoped(fn, (alloc) => {
          const out = alloc(n * 4);
          status(fn, module.alibiBias(out, nHeads, qLen, kLen, causal, maxBias, qOffset));
          return copyOut(out, n);
        });
      },
    },
  };
}
