// Sinusoidal encodings and the shift matrix M_k (cpp/src/sinusoidal.cpp).
import { PosencRangeError, checkChoice, checkElements, checkFinite, checkInt, checkOptions, numberOrBigint, toFloat64 } from './checks.js';

const SINUSOIDAL_LAYOUTS = { interleaved: 0, concat: 1 };

export function sinusoidalApi(module, heap) {
  const { scoped, copyOut, status } = heap;

  return {
    sinusoidal(seqLen, dModel, options) {
      const fn = 'sinusoidal';
      const { base = 10000, layout = 'interleaved', positions } = checkOptions(fn, options, ['base', 'layout', 'positions']);
      checkInt(fn, 'seqLen', seqLen, 1);
      checkInt(fn, 'dModel', dModel, 1);
      checkFinite(fn, 'base', base, { positive: true });
      const layoutCode = checkChoice(fn, 'layout', layout, SINUSOIDAL_LAYOUTS);
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
      checkFinite(fn, 'k', numberOrBigint(fn, 'k', k));
      checkInt(fn, 'dModel', dModel, 2);
      if (dModel % 2 !== 0) throw new PosencRangeError(`${fn}: dModel must be even (got ${dModel})`);
      checkFinite(fn, 'base', base, { positive: true });
      const layoutCode = checkChoice(fn, 'layout', layout, SINUSOIDAL_LAYOUTS);
      checkElements(fn, 'dModel * dModel', dModel * dModel);
      return scoped(fn, (alloc) => {
        const out = alloc(dModel * dModel * 4);
        status(fn, module.sinusoidalShift(out, Number(k), dModel, base, layoutCode));
        return copyOut(out, dModel * dModel);
      });
    },
  };
}
