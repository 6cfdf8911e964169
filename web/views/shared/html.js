// Small HTML helpers for the text views put after their plots (view.js: html(data, ctx)).

/** Text safe inside HTML. */
export const esc = (t) => String(t).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  .replace(/"/g, '&quot;');

/**
 * A table that may be wider than a phone: in a box that scrolls sideways (focusable, so a keyboard
 * scrolls it too; `label` names it, each one differently), with a hint above it that view.js shows
 * only while the table does not fit.
 */
export const scrollTable = (table, label) => `<p class="scroll-hint" hidden>The table is wider than the screen: swipe or scroll it sideways →</p>`
  + `<div class="scroll-x" tabindex="0" role="region" aria-label="${esc(label)}, scrolls sideways">${table}</div>`;
