// Small HTML helpers for the text views put after their plots (view.js: html(data, ctx)), and the
// scroll hints of their wide tables.

/** Text safe inside HTML. */
export const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  .replace(/"/g, '&quot;');

/**
 * A table that may be wider than a phone: in a box that scrolls sideways (focusable, so a keyboard
 * scrolls it too; `label` names it, each one differently), with a hint above it that scrollHints
 * shows only while the table does not fit.
 */
export const scrollTable = (table, label) => `<p class="scroll-hint" hidden>The table is wider than the screen: swipe or scroll it sideways →</p>`
  + `<div class="scroll-x" tabindex="0" role="region" aria-label="${esc(label)}, scrolls sideways">${table}</div>`;

// A table that is wider than its box (wrapped in .scroll-x) shows a scroll hint. Measured when the
// browser reports the box laid out (a ResizeObserver: on its first layout and on every change of
// its width), not right after the table is written, which would lay out the whole page in the
// middle of a frame's drawing.
function markScrolling(w) {
  const wide = w.scrollWidth > w.clientWidth + 1;
  w.classList.toggle('overflows', wide);
  w.classList.toggle('at-end', wide && w.scrollLeft + w.clientWidth >= w.scrollWidth - 1);
  const hint = w.previousElementSibling?.classList.contains('scroll-hint') ? w.previousElementSibling : null;
  if (hint) hint.hidden = !wide;
}
let scrollBoxes = null;  // made on first use, so that the views' modules load without a page

/**
 * The scroll hints of the wide tables that `box` holds: returns refill(fill), which runs fill (it
 * rewrites what box holds) and watches the tables it made; the hint also follows the scroll position.
 */
export function scrollHints(box) {
  box.addEventListener('scroll', (e) => { if (e.target.classList?.contains('scroll-x')) markScrolling(e.target); },
    { capture: true, passive: true });
  scrollBoxes ??= new ResizeObserver((entries) => { for (const e of entries) markScrolling(e.target); });
  return (fill) => {
    for (const w of box.querySelectorAll('.scroll-x')) scrollBoxes.unobserve(w);  // about to be replaced
    fill();
    for (const w of box.querySelectorAll('.scroll-x')) scrollBoxes.observe(w);
  };
}
