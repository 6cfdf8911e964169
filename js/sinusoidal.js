// Sinusoidal encodings and the shift matrix M_k (cpp/src/sinusoidal.cpp).
import {
  MAX_SIZE_T, PosencRangeError, checkChoice, checkElements, checkInt, checkNumber, checkOptions, numberOrBigint, toFloat64
} from './checks.js';

const SINUSOIDAL_LAYOUTS = { interleaved: 0, concat: 1 };

export function sinusoidalApi(module, heap) {
  const { scoped, copyOut, status } = heap;
  // base's rule (and, for the shift, k's and dModel's) is C++'s (sinusoidal_check,
  // sinusoidal_shift_check), asked before anything is allocated; JS checks the types.

  return {
    sinusoidal(seqLen, dModel, options) {
      const fn = 'sinusoidal';
      const { base = 10000, layout = 'interleaved', positions } = checkOptions(fn, options, ['base', 'layout', 'positions']);
      checkInt(fn, 'seqLen', seqLen, 1);
      checkInt(fn, 'dModel', dModel, 1);
      checkNumber(fn, 'base', base);
      const layoutCode = checkChoice(fn, 'layout', layout, SINUSOIDAL_LAYOUTS);
      status(fn, module.sinusoidalCheck(base, layoutCode), { values: { base } });
      const pos = positions === undefined ? null : toFloat64(fn, 'positions', positions);
      if (pos && pos.length !== seqLen) throw new PosencRangeError(`${fn}: positions.length must equal seqLen = ${seqLen} (got ${pos.length})`);
      checkElements(fn, 'seqLen * dModel', seqLen * dModel);
      return scoped(fn, (alloc, put) => {
        const out = alloc(seqLen * dModel * 4);
        const p = put(pos, Float64Array);
        status(fn, module.sinusoidal(out, seqLen, dModel, base, layoutCode, p));
        return copyOut(out, seqLen * dModel);
      });
    },

    sinusoidalShift(k, dModel, options) {
      const fn = 'sinusoidalShift';
      const { base = 10000, layout = 'interleaved' } = checkOptions(fn, options, ['base', 'layout']);
      checkNumber(fn, 'k', numberOrBigint(fn, 'k', k));
      checkInt(fn, 'dModel', dModel, 0, MAX_SIZE_T);
      checkNumber(fn, 'base', base);
      const layoutCode = checkChoice(fn, 'layout', layout, SINUSOIDAL_LAYOUTS);
      status(fn, module.sinusoidalShiftCheck(Number(k), dModel, base, layoutCode), { values: { k: Number(k), dModel, base } });
      checkElements(fn, 'dModel * dModel', dModel * dModel);
      return scoped(fn, (alloc) => {
        const out = alloc(dModel * dModel * 4);
        status(fn, module.sinusoidalShift(out, Number(k), dModel, base, layoutCode));
        return copyOut(out, dModel * dModel);
      });
    },
  };
}
