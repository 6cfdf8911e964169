// In-page links (the contents, the skip link, the errata's) scroll and move the focus without
// touching the URL's hash: the hash holds the settings, and a fragment there would reset them to the
// defaults. A target inside a closed "go deeper" fold opens it first (reveal). Views drawn after the
// jump change the height of the chapters above, so the target is kept in place for a few seconds,
// until the reader scrolls or types.
const PIN = 4000;  // ms the link target stays in place

/**
 * Wires the page's links; `content`: the element whose growth may move the target; reveal(el):
 * opens what hides it (folds.js). Returns goTo(id): what following a link to #id does (a link from
 * elsewhere, /#chapter-bias, arrives through it).
 */
export function setupPageLinks(content, reveal = () => {}) {
  let pinned = null;  // { target, until }: the link target kept in place while views above it draw
  function goTo(id) {
    const target = document.getElementById(id);
    if (!target) return false;
    reveal(target);
    // A target that is a fold of its own (an erratum: its line, then what was measured) opens.
    if (target.firstElementChild?.matches('details')) target.firstElementChild.open = true;
    target.scrollIntoView({ block: 'start' });
    if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
    target.focus({ preventScroll: true });
    pinned = { target, until: performance.now() + PIN };
    return true;
  }
  document.addEventListener('click', (e) => {
    const a = e.target.closest('a[href^="#"]');
    if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    if (goTo(a.getAttribute('href').slice(1))) e.preventDefault();
  });
  new ResizeObserver(() => {
    if (pinned && performance.now() < pinned.until) pinned.target.scrollIntoView({ block: 'start' });
  }).observe(content);
  for (const type of ['wheel', 'touchstart', 'keydown', 'mousedown']) {
    window.addEventListener(type, () => { pinned = null; }, { passive: true });
  }
  return goTo;
}
