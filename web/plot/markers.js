// Point markers, so that series can be told apart by shape as well as by colour: the lab's 16
// schemes share a plot, and under a simulated deuteranopia two pairs of their colours come within
// 3.1 ΔE00 of each other (docs/explorer.md). Eight shapes, each drawn filled or, `open`, outlined:
// 16 markers, one per scheme. Canvas and SVG (the legend's swatches) draw the same outlines.
export const MARKERS = ['circle', 'square', 'up', 'diamond', 'down', 'right', 'left', 'star'];

const TRIANGLE = [[0, -1.15], [1, 0.6], [-1, 0.6]];
const turn = (points, k) => points.map(([x, y]) => [[x, y], [-y, x], [-x, -y], [y, -x]][k]);
const STAR = Array.from({ length: 10 }, (_, k) => {
  const a = -Math.PI / 2 + (k * Math.PI) / 5, r = k % 2 ? 0.5 : 1.25;
  return [r * Math.cos(a), r * Math.sin(a)];
});
// Each shape's outline around (0, 0), about as large as a circle of radius 1 (null: the circle).
const OUTLINES = { circle: null, square: [[-0.9, -0.9], [0.9, -0.9], [0.9, 0.9], [-0.9, 0.9]],
  up: TRIANGLE, down: turn(TRIANGLE, 2), right: turn(TRIANGLE, 1), left: turn(TRIANGLE, 3),
  diamond: [[0, -1.25], [1.25, 0], [0, 1.25], [-1.25, 0]], star: STAR };

/** Traces a marker of `shape` at (x, y), r its size, as the current path of a 2-D context. */
export function markerPath(ctx, shape, x, y, r) {
  ctx.beginPath();
  const outline = OUTLINES[shape];
  if (!outline) { ctx.arc(x, y, r, 0, 2 * Math.PI); return; }
  outline.forEach(([u, v], k) => (k ? ctx.lineTo(x + u * r, y + v * r) : ctx.moveTo(x + u * r, y + v * r)));
  ctx.closePath();
}

/** Draws a marker ({ shape, open }) in the context's colours: filled, or its outline stroked when open. */
export function drawMarker(ctx, { shape, open }, x, y, r) {
  markerPath(ctx, shape, x, y, r);
  if (open) ctx.stroke(); else ctx.fill();
}

/** The same marker as SVG path data. */
export function markerSvg(shape, x, y, r) {
  const outline = OUTLINES[shape];
  if (!outline) return `M${x - r} ${y}a${r} ${r} 0 1 0 ${2 * r} 0a${r} ${r} 0 1 0 ${-2 * r} 0Z`;
  return `${outline.map(([u, v], k) => `${k ? 'L' : 'M'}${(x + u * r).toFixed(2)} ${(y + v * r).toFixed(2)}`).join('')}Z`;
}
