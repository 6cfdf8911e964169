// The "go deeper" folds: each chapter's <details class="deeper" data-fold="chapter"> holds what goes
// beyond the lesson, closed by default, so the lesson reads as one path. Opening or closing one is a
// committed change of the setting `deeper` (the open folds), so a shared link opens them and Back
// closes them again; a link or a guided step to something inside a closed fold opens it first.
import { FOLDS, listOf } from '../settings/state.js';

/**
 * Wires the folds under `root`. host: { state(), apply(patch) (one committed change) }. Returns
 * { sync(st) (opens exactly the folds st.deeper names), opening(element) (opens the closed fold
 * around it, if any, and returns the settings patch that says so, else {}: for a caller that
 * commits it with its own change), reveal(element) (the same, committed at once) }. Throws if the
 * page's folds are not state.js's FOLDS.
 */
export function setupFolds(root, host) {
  const folds = [...root.querySelectorAll('details.deeper[data-fold]')];
  const names = folds.map((d) => d.dataset.fold);
  if (names.join() !== FOLDS.join()) {
    throw new Error(`index.html's folds (${names.join(', ')}) are not state.js's FOLDS (${FOLDS.join(', ')})`);
  }
  const openNow = () => folds.filter((d) => d.open).map((d) => d.dataset.fold);
  const same = (a, b) => a.length === b.length && a.every((x) => b.includes(x));
  // A toggle event comes a task after `open` changed, by the reader or by sync: only a state that
  // differs from the settings is a change of the reader's.
  for (const d of folds) {
    d.addEventListener('toggle', () => {
      const open = openNow();
      if (!same(open, listOf(host.state().deeper))) host.apply({ deeper: open.join(',') });
    });
  }
  const opening = (element) => {
    const d = element?.closest('details.deeper');
    if (!d || d.open) return {};
    d.open = true;
    return { deeper: openNow().join(',') };
  };
  return {
    sync(st) {
      const open = listOf(st.deeper);
      for (const d of folds) {
        const want = open.includes(d.dataset.fold);
        if (d.open !== want) d.open = want;
      }
    },
    opening,
    reveal(element) {
      const patch = opening(element);
      if (patch.deeper !== undefined) host.apply(patch);
    },
  };
}
