// Learned absolute position tables and embedding (cpp/src/learned.cpp).
import {
  PosencRangeError, PosencTypeError, checkElements, checkFloat32Array, checkInt, checkNumber,
  checkOptions, jsMessageWith, numberOrBigint, toFloat64
} from './checks.js';

// The rules of std, scale and the rows a call reads are C++'s (learned_init_check,
// learned_lookup_check, embed_check, embed_token_check), asked before anything is allocated, a
// position or token at a time, named as the call gave it; JS checks the types and lengths.
// ctx: { module, status } (learnedApi's).
function checkRow({ module, status }, fn, i, p, offset, maxLen) {
  const name = `positions[${i}]`;
  status(fn, module.learnedLookupCheck(p, offset, maxLen), {
    values: { [name]: p, offset, maxLen }, names: jsMessageWith({ pos: name }),
    note: () => `: a model trained on ${maxLen} positions has no embedding for it`,
  });
}
function checkToken({ module, status }, fn, i, token, vocab, pos, rows, given) {
  const [t, p] = [`tokenIds[${i}]`, given ? `positions[${i}]` : `the position of tokenIds[${i}]`];
  const sizes = { vocab: 'tokenEmbeddings rows', pos_rows: 'positionTable rows' };
  status(fn, module.embedTokenCheck(token, vocab, pos, rows), {
    values: { [t]: token, [p]: pos, [sizes.vocab]: vocab, [sizes.pos_rows]: rows }, names: jsMessageWith({ tokens: t, pos: p, ...sizes }),
  });
}

export function learnedApi(module, heap) {
  const { scoped, f32, copyOut, status } = heap;
  const ctx = { module, status };

  return {
    learnedTable(maxLen, dModel, options) {
      const fn = 'learnedTable';
      const { seed = 0, std = 0.02, weights, offset: offsetGiven = 0 } = checkOptions(fn, options, ['seed', 'std', 'weights', 'offset']);
      checkInt(fn, 'maxLen', maxLen, 1);
      checkInt(fn, 'dModel', dModel, 1);
      const offset = checkInt(fn, 'offset', numberOrBigint(fn, 'offset', offsetGiven), 0, 2 ** 31 - 1);
      checkElements(fn, 'maxLen * dModel', maxLen * dModel);
      let table;
      if (weights !== undefined) {
        checkFloat32Array(fn, 'weights', weights);
        if (weights.length !== maxLen * dModel) {
          throw new PosencRangeError(`${fn}: weights.length must equal maxLen * dModel = ${maxLen * dModel} (got ${weights.length})`);
        }
        table = weights.slice();
      } else {
        checkInt(fn, 'seed', seed, 0);
        checkNumber(fn, 'std', std);
        status(fn, module.learnedInitCheck(std), { values: { std } });
        table = scoped(fn, (alloc) => {
          const out = alloc(maxLen * dModel * 4);
          status(fn, module.learnedInit(out, maxLen, dModel, seed, std));
          return copyOut(out, maxLen * dModel);
        });
      }
      const lookup = (positions) => {
        const lfn = 'learnedTable.lookup';
        const pos = toFloat64(lfn, 'positions', positions, { integer: true });
        if (pos.length === 0) throw new PosencRangeError(`${lfn}: positions must not be empty`);
        checkElements(lfn, 'positions.length * dModel', pos.length * dModel);
        pos.forEach((p, i) => checkRow(ctx, lfn, i, p, offset, maxLen));
        return scoped(lfn, (alloc, put) => {
          const t = put(table), p = put(pos, Int32Array);
          const out = alloc(pos.length * dModel * 4);
          status(lfn, module.learnedLookup(out, t, maxLen, dModel, p, pos.length, offset));
          return copyOut(out, pos.length * dModel);
        });
      };
      return { maxLen, dModel, offset, weights: table, lookup };
    },

    embed(tokenIds, options) {
      const fn = 'embed';
      if (options === undefined) throw new PosencTypeError(`${fn}: options { tokenEmbeddings, dModel, positionTable } are required`);
      const { tokenEmbeddings, dModel, positionTable, positions, scale = Math.sqrt(dModel) } = checkOptions(fn, options,
        ['tokenEmbeddings', 'dModel', 'positionTable', 'positions', 'scale']);
      const tokens = toFloat64(fn, 'tokenIds', tokenIds, { integer: true });
      if (tokens.length === 0) throw new PosencRangeError(`${fn}: tokenIds must not be empty`);
      checkInt(fn, 'dModel', dModel, 1);
      checkFloat32Array(fn, 'tokenEmbeddings', tokenEmbeddings);
      checkFloat32Array(fn, 'positionTable', positionTable);
      checkNumber(fn, 'scale', scale);
      status(fn, module.embedCheck(scale), { values: { scale } });
      for (const [name, t] of [['tokenEmbeddings', tokenEmbeddings], ['positionTable', positionTable]]) {
        if (t.length === 0 || t.length % dModel !== 0) {
          throw new PosencRangeError(`${fn}: ${name}.length must be a non-zero multiple of dModel = ${dModel} (got ${t.length})`);
        }
      }
      const vocab = tokenEmbeddings.length / dModel;
      const rows = positionTable.length / dModel;
      const pos = positions === undefined ? tokens.map((_, i) => i) : toFloat64(fn, 'positions', positions, { integer: true });
      if (pos.length !== tokens.length) {
        throw new PosencRangeError(`${fn}: positions.length must equal tokenIds.length = ${tokens.length} (got ${pos.length})`);
      }
      tokens.forEach((t, i) => checkToken(ctx, fn, i, t, vocab, pos[i], rows, positions !== undefined));
      const n = tokens.length;
      checkElements(fn, 'tokenIds.length * dModel', n * dModel);
      // Only the rows used cross into the heap: row i of each gathered table belongs to token i.
      return scoped(fn, (alloc, put) => {
        const e = alloc(n * dModel * 4);
        const q = alloc(n * dModel * 4);
        const idx = put(tokens.map((_, i) => i), Int32Array);
        const out = alloc(n * dModel * 4);
        const eView = f32(e, n * dModel), qView = f32(q, n * dModel);
        for (let i = 0; i < n; i++) {
          eView.set(tokenEmbeddings.subarray(tokens[i] * dModel, (tokens[i] + 1) * dModel), i * dModel);
          qView.set(positionTable.subarray(pos[i] * dModel, (pos[i] + 1) * dModel), i * dModel);
        }
        status(fn, module.embed(out, idx, n, e, n, dModel, q, n, idx, scale));
        return copyOut(out, n * dModel);
      });
    },
  };
}
