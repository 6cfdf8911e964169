// Plot cursors moved by the keyboard: arrows by one, PageUp/PageDown by a tenth, Home/End to the
// ends. view.js uses them for every plot; views with their own layout (panels) call them too.

/** Moves a grid cursor { x, y } for a key; down: row 0 is drawn at the top (ArrowUp lowers y). */
export function moveGrid(c, nx, ny, key, down = false) {
  const big = Math.max(1, Math.round(nx / 10));
  const clamp = (v, n) => Math.max(0, Math.min(n - 1, v));
  const dx = { ArrowRight: 1, ArrowLeft: -1, PageUp: big, PageDown: -big }[key] ?? 0;
  const dy = ({ ArrowUp: 1, ArrowDown: -1 }[key] ?? 0) * (down ? -1 : 1);
  if (key === 'Home') return { ...c, x: 0 };
  if (key === 'End') return { ...c, x: nx - 1 };
  return { ...c, x: clamp(c.x + dx, nx), y: clamp(c.y + dy, ny) };
}

/** Moves an index cursor { i } over n points. */
export function moveIndex(c, n, key) {
  const big = Math.max(1, Math.round(n / 10));
  const d = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: big, PageDown: -big }[key] ?? 0;
  if (key === 'Home') return { ...c, i: 0 };
  if (key === 'End') return { ...c, i: n - 1 };
  return { ...c, i: Math.max(0, Math.min(n - 1, c.i + d)) };
}

/**
 * Moves a panel cursor { panel, x, y }: within the panel, and on to the next one at an edge.
 * grids: { nx, ny, down } per panel (down: its row 0 is at the top).
 */
export function movePanels(c, grids, key) {
  const g = grids[c.panel];
  const at = moveGrid(c, g.nx, g.ny, key, g.down);
  if (key === 'ArrowRight' && c.x === g.nx - 1 && c.panel + 1 < grids.length) {
    return { panel: c.panel + 1, x: 0, y: Math.min(c.y, grids[c.panel + 1].ny - 1) };
  }
  if (key === 'ArrowLeft' && c.x === 0 && c.panel > 0) {
    return { panel: c.panel - 1, x: grids[c.panel - 1].nx - 1, y: Math.min(c.y, grids[c.panel - 1].ny - 1) };
  }
  return at;
}

/**
 * The panel drawn next to `panel` in an arrow key's direction in a panels layout (drawPanels'
 * { panels: [{ box }] }): the nearest one that way, one in line with it first (a last row part
 * filled: the nearest below, across); `panel` itself at the edge, or with no such layout.
 */
export function panelToward(layout, panel, key) {
  const boxes = layout?.panels?.map((p) => p.box), b = boxes?.[panel];
  const [dx, dy] = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] }[key] ?? [0, 0];
  if (!b || (!dx && !dy)) return panel;
  // Ranked by: in line or not, then the distance that way, then the distance across.
  const before = (a, z) => { const j = a.findIndex((v, m) => v !== z[m]); return j >= 0 && a[j] < z[j]; };
  let best = panel, nearest = [Infinity, Infinity, Infinity];
  boxes.forEach((o, k) => {
    const along = dx ? (o.x - b.x) * dx : (o.y - b.y) * dy, across = dx ? Math.abs(o.y - b.y) : Math.abs(o.x - b.x);
    const inLine = dx ? o.y < b.y + b.h && b.y < o.y + o.h : o.x < b.x + b.w && b.x < o.x + o.w;
    const rank = [inLine ? 0 : 1, along, across];
    if (along > 0 && before(rank, nearest)) { best = k; nearest = rank; }
  });
  return best;
}

/**
 * Moves a cursor { panel, x, y } over a strip of `pairs` (panel -1) above panels of grids (grids[k]
 * for panel k, as movePanels takes them) laid out by drawStripPanels (layout: what it drew): within
 * a grid as movePanels; up or down past a grid's edge to the panel drawn there, from the top
 * panels up to the strip, and from the strip down to panel 0.
 */
export function moveStripPanels(c, pairs, grids, key, layout) {
  const all = [{ nx: pairs, ny: 1 }, ...grids], clampX = (k) => Math.min(c.x, all[k + 1].nx - 1);
  // The row a move enters panel k by: the one drawn at its top going down, at its bottom going up.
  const edge = (k, up) => (Boolean(all[k + 1].down) === up ? all[k + 1].ny - 1 : 0);
  const at = movePanels({ panel: c.panel + 1, x: c.x, y: c.y }, all, key), g = all[at.panel];
  if ((key === 'ArrowUp' || key === 'ArrowDown') && at.y === c.y) {  // at the grid's edge that way
    const up = key === 'ArrowUp', next = c.panel === -1 ? (up ? -1 : 0) : panelToward(layout, c.panel, key);
    const to = next === c.panel && up ? -1 : next;
    if (to !== c.panel) return { panel: to, x: clampX(to), y: to === -1 ? 0 : edge(to, up) };
  }
  return { panel: at.panel - 1, x: Math.min(at.x, g.nx - 1), y: Math.min(at.y, g.ny - 1) };
}

/**
 * Moves a cursor { panel, i } over panels of lines laid out by drawPanels (layout: what it drew):
 * ArrowUp and ArrowDown to the panel drawn above or below, the same point where it has one; the
 * other keys as moveLinePanels.
 */
export function moveLinePanelGrid(c, counts, key, layout) {
  if (key !== 'ArrowUp' && key !== 'ArrowDown') return moveLinePanels(c, counts, key);
  const panel = panelToward(layout, c.panel, key);
  return { panel, i: Math.min(c.i, counts[panel] - 1) };
}

/**
 * Moves a cursor { panel, i } over panels of lines with counts[panel] points each: within the
 * panel, and on to the next (or the previous) one past its last (or first) point, by as many points
 * as are left of the step (so that PageDown undoes a PageUp that lands inside the next panel); with
 * no step (key '': the data changed under the cursor) it stays in its panel.
 */
export function moveLinePanels(c, counts, key) {
  let { panel, i } = c;
  const step = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 4, PageDown: -4 }[key] ?? 0;
  if (key === 'Home') i = 0;
  else if (key === 'End') i = counts[panel] - 1;
  else i += step;
  if (step > 0 && i >= counts[panel] && panel + 1 < counts.length) { i -= counts[panel]; panel += 1; }
  else if (step < 0 && i < 0 && panel > 0) { panel -= 1; i += counts[panel]; }
  return { panel, i: Math.max(0, Math.min(counts[panel] - 1, i)) };
}
