// Prose that depends on the settings: a <span data-live="name"> in index.html holds the words for
// the lesson defaults, and LIVE[name] rewrites them for the settings on the page (a preset, a
// guided step, the reader's own values), so no sentence claims what the plots do not show (the
// clocks "past L_train" at a position a model's L_train has not reached). Numbers come from the
// settings or the package.

import { ntkBase, ropeRule, rotaryWidth } from '../settings/rope-settings.js';
import { t5Rule } from '../views/shared/schemes.js';

const n = (v) => v.toLocaleString('en-US');

/** The live sentences, by name: (ctx: { pe, st, extras }) → text ('' hides the span). */
export const LIVE = {
  // The clocks view: where its position sits against L_train and L_target.
  'clocks-position': ({ st }) => {
    const at = `It shows position ${n(st.pos)}`;
    if (st.pos <= st.lTrain) {
      return `${at}, not past L_train = ${n(st.lTrain)}: every angle there was reached in training, so no rim is red `
        + `with any scaling. Move the position past ${n(st.lTrain)} (the first step above does) to see red rims.`;
    }
    if (st.pos <= st.lTarget) {
      return `${at}, past L_train = ${n(st.lTrain)} and within L_target = ${n(st.lTarget)}: with scaling none the slow `
        + 'pairs\' rims are red; a scaling that stretches them by its factor (yarn, linear, …) keeps them grey up to '
        + `about L_train × factor = ${n(Math.round(st.lTrain * st.factor))}.`;
    }
    return `${at}, past L_train = ${n(st.lTrain)} and past L_target = ${n(st.lTarget)} too: even a scaling made for `
      + 'L_target leaves some rims red here.';
  },
  // The long-context chapter's opening: NTK's base for its settings (the package's frequencies).
  'ntk-base': ({ pe, st, extras }) => {
    if (st.dModel % 2) return `for an even d (d_model ${st.dModel} is odd)`;
    if (ropeRule(st, 'ntk')) return `for an even rotated width d above 2 (these settings rotate ${rotaryWidth(st)})`;
    const { d, base } = ntkBase(pe, st, extras);
    return `${n(Math.round(base))} for θ ${n(st.theta)}, d ${d} and s ${+st.factor.toPrecision(4)}`;
  },
  // The long-context fold's opening: which scaling its plots start with.
  'long-context-start': ({ st, extras }) => {
    if (!st.preset && !st.model && st.scaling === 'yarn' && st.factor === 4) {
      return 'This fold starts with YaRN at 4× so the plots show a difference.';
    }
    const whose = extras.modelLabel ? ` (${extras.modelLabel})` : '';
    if (st.scaling === 'none') {
      return `The settings${whose} have no scaling (none), so scaled and unscaled plots agree: choose a scaling above `
        + 'to see one.';
    }
    return `The plots now show ${st.scaling} ×${st.factor}${whose}, from L_train = ${n(st.lTrain)} to L_target = `
      + `${n(st.lTarget)}.`;
  },
  // A model whose max_position_embeddings is past the L_target setting's limit says so here too.
  'ltarget-capped': ({ st, extras }) => {
    const c = extras.clamped?.find((x) => x.key === 'lTarget');
    if (!c || st.lTarget !== c.shown) return '';
    return ` ${extras.modelLabel ?? 'The model'} publishes max_position_embeddings ${n(c.published)}; L_target stops at `
      + `${n(c.limit)} here, so the plots end at ${n(c.shown)} (the in-production view counts the full ${n(c.published)}).`;
  },
  // T5's last bucket starts before max distance: where, for these buckets.
  't5-last': ({ pe, st }) => {
    if (t5Rule(st)) {
      const half = Math.floor(st.t5Buckets / 2);
      return `with ${st.t5Buckets} buckets and max distance ${n(st.t5MaxDist)}, which T5 refuses: max distance must be `
        + `more than ${n(half)} (${n(Math.floor(half / 2))} for the encoder), the distances that get a bucket each`;
    }
    const options = { numBuckets: st.t5Buckets, maxDistance: st.t5MaxDist };
    const enc = (d) => pe.t5Bucket([d], { ...options, bidirectional: true })[0];
    const dec = (d) => pe.t5Bucket([-d], { ...options, bidirectional: false })[0];
    const first = (bucket) => n(firstInLast(bucket, st.t5Buckets - 1, Math.min(4 * st.t5MaxDist, 1 << 20)));
    return `with ${st.t5Buckets} buckets and max distance ${n(st.t5MaxDist)}, from ${first(enc)} for the encoder and `
      + `${first(dec)} for the decoder`;
  },
};

/**
 * The first distance 1 … reach whose bucket is the last, or '—' if none is: bucket(d) never falls
 * as d grows, so a binary search over a few calls finds it (a scan of up to 2^20 distances held the
 * page for about 0.3 s on every change of the settings at max distance 10^6).
 */
function firstInLast(bucket, last, reach) {
  if (bucket(reach) !== last) return '—';
  let lo = 1, hi = reach;  // the answer is in [lo, hi]
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (bucket(mid) === last) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/** Rewrites every live span under `root` for ctx ({ pe, st, extras }). */
export function updateProse(root, ctx) {
  for (const el of root.querySelectorAll('[data-live]')) {
    const text = LIVE[el.dataset.live]?.(ctx);
    if (text === undefined) continue;
    if (el.textContent !== text) el.textContent = text;
    el.hidden = text === '';
  }
}
