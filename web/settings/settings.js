// The settings on the page and the URL that holds them (web/settings/state.js: the fields and the hash).
// One history entry per committed change: the first step of a drag or of typing pushes an entry,
// later steps replace it (at most every 250 ms: browsers throttle rapid URL writes), and the
// commit finishes it. Back then undoes the whole change.
// `live` says the current entry is still open (a change in progress). At most one delayed write is
// pending, and a commit, a new model or Back cancels it: a delayed write left over from the change
// just committed would reopen its entry, and the next change would then overwrite it instead of
// pushing its own (two typed values, one entry: issue 20).
// A hash with values the page refuses (a hand-edited or old link) is corrected in place
// (replaceState: no new entry) and the refusals are handed to onRefused, which says what and why.
// `extras`: what the model on the page adds that the URL cannot hold (web/settings/model-settings.js).
import { defaults, readHash, toHash } from './state.js';

const URL_WRITE_EVERY = 250;  // ms between URL writes while a change is in progress

/**
 * baseOf(preset): the settings a link's absent keys take (state.js readHash; the defaults unless a
 * preset is named). Returns { state (the current settings), extras, refused (what the first URL
 * asked for that was refused: [{ key, text, why }]), update(patch, commit), replace(state), onEdit(fn(commit)),
 * onHistory(fn(refused)), refuse(refused) }. onEdit: after each update; onHistory: after Back/Forward
 * (or an edited hash) set the settings from the URL, with what that URL asked for and was refused.
 */
export function createSettings({ baseOf = () => defaults() } = {}) {
  const edits = [], histories = [];
  const hashOf = (state) => toHash(state, baseOf(state.preset));
  // The URL's settings; a hash with refused values is rewritten to the settings actually used. A
  // fragment naming an element of the page (a link to a chapter from elsewhere: #chapter-bias) is a
  // place to go, not settings: the defaults, and `anchor` says where.
  function fromUrl() {
    const id = /^#[A-Za-z][\w-]*$/.test(location.hash) ? location.hash.slice(1) : '';
    // A view's id (view-<name>) is given when the view is built, after the settings are read.
    const place = id && (document.getElementById(id) ?? document.querySelector(`section[data-view="${id.replace(/^view-/, '')}"]`));
    if (place) return { state: baseOf(''), refused: [], anchor: id };
    const { state, refused } = readHash(location.hash, baseOf);
    if (refused.length) history.replaceState(history.state, '', hashOf(state) || `${location.pathname}${location.search}`);
    return { state, refused };
  }
  const first = fromUrl();
  let st = first.state;
  let live = false, urlTimer = 0;
  // extras.irope: null (no model) or { model: its name, info: readModel's irope or null, given:
  // what the config's no_rope_layers is, 'list' | 'empty' | 'absent' (undefined for a file), interval }.
  // extras.clamped: what the model publishes that a setting's limit cut ([{ key, published, shown }]);
  // extras.opened: the name of the file or pasted config whose extras are in memory.
  const extras = { longFactors: null, ropeFile: null, learned: null, modelName: null, irope: null, clamped: [], opened: null };

  function cancelUrlWrite() {
    clearTimeout(urlTimer);
    urlTimer = 0;
  }
  function commitUrl(commit) {
    cancelUrlWrite();
    const hash = hashOf(st);
    const same = hash === location.hash || (hash === '' && location.hash === '');
    const url = hash || `${location.pathname}${location.search}`;
    if (!live && !same) history.pushState(null, '', url);
    else if (!same) history.replaceState(null, '', url);
    live = !commit;
  }

  window.addEventListener('popstate', () => {
    cancelUrlWrite();
    live = false;
    const read = fromUrl();
    st = read.state;
    for (const fn of histories) fn(read.refused);
  });

  return {
    get state() { return st; },
    extras,
    refused: first.refused,
    /** The element the page's first URL pointed at (a link from elsewhere), or undefined. */
    anchor: first.anchor,
    /** Settings the page found it cannot use after all (a preset it does not have): back to their defaults, URL corrected. */
    refuse(patch) {
      st = { ...st, ...patch };
      history.replaceState(history.state, '', hashOf(st) || `${location.pathname}${location.search}`);
    },
    /** A change by the user: `commit` false while it is in progress (a drag, typing), true when done. */
    update(patch, commit) {
      st = { ...st, ...patch };
      if (commit || !live) commitUrl(commit);
      else if (!urlTimer) urlTimer = setTimeout(() => { urlTimer = 0; commitUrl(false); }, URL_WRITE_EVERY);  // the latest st
      for (const fn of edits) fn(commit);
    },
    /** A new model: these settings, as one committed entry. */
    replace(state) {
      st = state;
      commitUrl(true);
    },
    onEdit(fn) { edits.push(fn); },
    onHistory(fn) { histories.push(fn); },
  };
}
