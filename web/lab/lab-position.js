// What the lab's trained models learned about positions, for the views that draw it (docs/explorer.md,
// "The lab chapter"): each scheme's `position` parameters (docs/lab.md, cpp/lab/model.cpp
// Model::position_parameters) from the lab result on show, or from the shipped one when the result on
// show has no model of that scheme, with words saying which result is drawn.
import { LabLoading, describeSource } from './lab.js';

// The lab's T5 buckets (cpp/lab/model.hpp kT5Buckets, kT5MaxDistance; causal: forward.cpp takes
// t5_bucket(−(i − j)) unidirectional).
export const LAB_T5 = { bidirectional: false, numBuckets: 32, maxDistance: 128 };

/**
 * The trained parameters of `scheme` (its first model that has them: the CLI's JSON keeps its first
 * seed's): { result, seed, position: { name: { shape, values } }, config,
 * fallback (true: the result on show has no such model, the shipped one is drawn) }, or null.
 */
export function trainedPosition(lab, scheme) {
  lab.need();
  for (const result of [lab.shown(), lab.shipped()]) {
    const s = result?.results.find((x) => x.scheme === scheme && x.position && Object.keys(x.position).length);
    if (s) return { result, seed: s.seed, position: s.position, config: result.config, fallback: result !== lab.shown() };
  }
  return null;
}

/** Like trainedPosition, but an Error saying what is missing when there is nothing to draw. */
export function requireTrained(lab, scheme) {
  const t = trainedPosition(lab, scheme);
  if (!t && lab.waiting()) throw new LabLoading();
  if (!t) {
    throw new Error(`${lab.shippedFailure() || `No lab result has a trained ${scheme} model.`} `
      + `Train ${scheme} in the lab chapter to see it.`);
  }
  return t;
}

/** "Drawn from …": which result, and why the shipped one when the result on show is another. */
export function drawnFrom(t, schemes) {
  const why = t.fallback ? ` (the lab's result on show has no ${schemes} model)` : '';
  const seed = (t.result.config.seeds ?? 1) > 1 ? `seed ${t.seed}'s model of ` : '';
  return `Drawn from ${seed}${describeSource(t.result)}${why}.`;
}

/** A caption fragment for exports: the result's source and date. */
export const resultTag = (t) => `${t.result.source} ${t.result.date}`;
