// In-page links (the contents, the skip link, the errata's) scroll and move the focus without
// touching the URL's hash: the hash holds the settings, and a fragment there would reset them to the
// defaults. A target inside a closed "go deeper" fold opens it first (reveal). Views drawn after the
// jump change the height of the chapters above, so the target is kept in place for a few seconds,
// until the reader scrolls or types.
// A link or guided step focused in a row that scrolls sideways (a phone's contents and guided steps,
// guide.js's) is brought wholly into view. What Tab focuses is kept clear of the sticky settings bar
// while the views around it draw.
const PIN = 4000;  // ms the link target stays in place
const TAB_PIN = 1500;  // ms what Tab focused stays clear of the bar

/**
 * Keeping something in sight while views draw: pin(show, ms) runs show() (which scrolls), and runs it
 * again whenever `content` (the element whose growth may move it) changes size, for ms, until the
 * reader scrolls, types or clicks. One pin at a time: a link or a guided step takes it over.
 */
export function createPin(content) {
  let pinned = null;  // { show, until }
  new ResizeObserver(() => {
    if (pinned && performance.now() < pinned.until) pinned.show();
  }).observe(content);
  for (const type of ['wheel', 'touchstart', 'keydown', 'mousedown']) {
    window.addEventListener(type, () => { pinned = null; }, { passive: true });
  }
  return (show, ms) => {
    show();
    pinned = { show, until: performance.now() + ms };
  };
}

/**
 * Wires the page's links; pin: createPin's; reveal(el): opens what hides it (folds.js). Returns
 * goTo(id): what following a link to #id does (a link from elsewhere, /#chapter-bias, arrives through it).
 */
export function setupPageLinks(pin, reveal = () => {}) {
  function goTo(id) {
    const target = document.getElementById(id);
    if (!target) return false;
    reveal(target);
    // A target that is a fold of its own (an erratum: its line, then what was measured) opens.
    if (target.firstElementChild?.matches('details')) target.firstElementChild.open = true;
    if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
    target.focus({ preventScroll: true });
    pin(() => target.scrollIntoView({ block: 'start' }), PIN);  // kept in place while views above it draw
    return true;
  }
  // Tab scrolls what it focuses to below the settings bar (the scroll margin, style.css), but a view
  // drawn just after it, above it, can shorten the page there and slide it under the bar: it is put
  // back, as a link's target is, until the next key.
  const settings = document.getElementById('settings');
  const clearOfBar = (el) => () => {
    const r = el.getBoundingClientRect(), bar = settings.getBoundingClientRect().bottom;
    if (r.height && r.top < bar && r.height <= innerHeight - bar) el.scrollIntoView({ block: 'start' });
  };
  let tabbing = false;  // the focus moves by Tab (not by a link, a guided step or a click)
  window.addEventListener('keydown', (e) => { tabbing = e.key === 'Tab'; }, { capture: true });
  window.addEventListener('pointerdown', () => { tabbing = false; }, { capture: true, passive: true });
  // On a phone the contents and the guided steps are rows that scroll sideways, their right end
  // faded: one focused there is brought wholly into the row's clear part (Chromium leaves one that
  // shows in part where it is).
  document.addEventListener('focusin', (e) => {
    if (tabbing && e.target.closest?.('main')) pin(clearOfBar(e.target), TAB_PIN);
    const row = e.target.closest?.('.toc ol, .guide');
    if (!row || row.scrollWidth <= row.clientWidth) return;
    // fade: a little more than the rows' faded ends (36 px and 28 px in style.css).
    const r = e.target.getBoundingClientRect(), box = row.getBoundingClientRect(), fade = 40;
    if (r.right > box.right - fade) row.scrollLeft += r.right - (box.right - fade);
    else if (r.left < box.left) row.scrollLeft -= box.left - r.left;
  });
  document.addEventListener('click', (e) => {
    const a = e.target.closest('a[href^="#"]');
    if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    if (goTo(a.getAttribute('href').slice(1))) e.preventDefault();
  });
  return goTo;
}
