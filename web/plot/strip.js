// A strip of rotary pairs coloured by what turns them (M-RoPE's temporal / height / width sections,
// 2-D RoPE's rows / columns) above a set of panels, in one canvas: the strip's cells take the
// cursor { panel: -1, x: pair } and the panels below keep theirs.
import { legible } from './legible.js';
import { FONT, SMALL } from './core.js';
import { drawPanels } from './panels.js';

const CELL_H = 22;

/** Height of the strip band at this width (a legend line or two, the cells, the tick labels). */
export function stripHeight(width, legend) {
  return 16 * legendRows(width, legend) + CELL_H + 34;
}

function legendRows(width, legend) {
  const rough = legend.reduce((w, l) => w + 7 * l.length + 34, 0);
  return Math.max(1, Math.ceil(rough / Math.max(200, width - 16)));
}

/**
 * spec: { strip: { title, groups: Int8Array (a group per pair, -1 = not rotated), colors: [css],
 *         legend: [text per group] }, panels, minWidth, each (drawPanels' row heights), cursor }.
 */
export function drawStripPanels(ctx, width, height, spec, colors) {
  const { strip } = spec;
  const band = stripHeight(width, strip.legend);
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, band);
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'left';
  // Legend: a swatch and its text, wrapped.
  let x = 8, y = 10;
  strip.legend.forEach((text, g) => {
    const w = ctx.measureText(text).width + 24;
    if (x + w > width - 8 && x > 8) { x = 8; y += 16; }
    ctx.fillStyle = legible(strip.colors[g], colors);
    ctx.fillRect(x, y - 6, 14, 12);
    ctx.fillStyle = colors.fg;
    ctx.fillText(text, x + 18, y, width - x - 26);
    x += w + 12;
  });
  const n = strip.groups.length;
  const top = y + 12, left = 8, cw = (width - 16) / n;
  for (let i = 0; i < n; i++) {
    const g = strip.groups[i];
    ctx.fillStyle = g < 0 ? colors.grid : legible(strip.colors[g], colors);
    ctx.fillRect(left + i * cw, top, Math.max(1, cw - (cw > 4 ? 1 : 0)), CELL_H);
  }
  // Pair numbers: about one per 40 px.
  ctx.font = SMALL;
  ctx.fillStyle = colors.muted;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  const every = Math.max(1, Math.ceil(40 / cw));
  const step = [1, 2, 4, 5, 8, 10, 16, 20, 32, 50, 64, 100].find((s) => s >= every) ?? every;
  for (let i = 0; i < n; i += step) ctx.fillText(String(i), left + (i + 0.5) * cw, top + CELL_H + 2);
  ctx.textAlign = 'right';
  ctx.fillText(strip.title, width - 8, top + CELL_H + 15, width - 16);
  const c = spec.cursor;
  if (c && c.panel === -1) {
    for (const [style, w] of [['rgba(0,0,0,0.85)', 3], ['#ffffff', 1]]) {
      ctx.strokeStyle = style;
      ctx.lineWidth = w;
      ctx.strokeRect(left + c.x * cw - 1, top - 2, cw + 2, CELL_H + 4);
    }
  }
  ctx.save();
  ctx.translate(0, band);
  const below = drawPanels(ctx, width, height - band,
    { panels: spec.panels, minWidth: spec.minWidth, each: spec.each, cursor: c && c.panel >= 0 ? c : null }, colors);
  ctx.restore();
  return {
    panels: below.panels,  // where each panel is drawn (below the strip), for the keyboard's moves
    hit(cx, cy) {
      if (cy >= top - 2 && cy < top + CELL_H + 2 && cx >= left && cx < left + n * cw) {
        return { panel: -1, x: Math.floor((cx - left) / cw), y: 0 };
      }
      if (cy < band) return null;
      return below.hit(cx, cy - band);
    },
  };
}
