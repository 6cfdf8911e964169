// How the explorer's line charts stroke a long series (web/plot/lines.js holds no DOM code, so Node
// runs it on a canvas context that records its calls): in pieces of at most 48 segments, each from
// where the last ended with its dashes at their phase, leaving out a point only where the line moves
// less than a pixel for it. The browser rasterizes a canvas's drawing when it commits the frame, where
// one stroke of 2000 segments cost the page's lab-training view a long task.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drawLines, legendRows } from '../../web/plot/lines.js';

const COLOR = '#123456';

// A 2-D context that records the series' strokes: each a list of subpaths, each a list of [x, y]
// vertices, with the dash offset it was stroked at.
function recorder() {
  const strokes = [];
  let path = [], state = { strokeStyle: '', lineDashOffset: 0, dash: [] };
  const ctx = new Proxy({}, {
    get(_, k) {
      if (k === 'measureText') return (t) => ({ width: 7 * String(t).length });
      if (k === 'beginPath') return () => { path = []; };
      if (k === 'moveTo') return (x, y) => { path.push([[x, y]]); };
      if (k === 'lineTo') return (x, y) => { path.at(-1).push([x, y]); };
      if (k === 'setLineDash') return (d) => { state.dash = d; };
      if (k === 'stroke') {
        return () => { if (state.strokeStyle === COLOR && path.length) strokes.push({ path, offset: state.lineDashOffset, dash: state.dash }); };
      }
      if (k in state) return state[k];
      return () => {};
    },
    set(_, k, v) { state[k] = v; return true; },
  });
  return { ctx, strokes, state };
}

function draw(dash) {
  const n = 1500;
  const x = Float64Array.from({ length: n }, (_, i) => i + 1);
  // A decaying loss with noise at every step, as the lab's training curves are.
  const y = x.map((s) => 1.5 + 2 * Math.exp(-s / 300) + 0.004 * Math.sin(s * 2.3));
  const rec = recorder();
  const colors = { bg: '#fff', fg: '#000', muted: '#666', grid: '#eee', accent: '#00f' };
  const layout = drawLines(rec.ctx, 1142, 280, { series: [{ label: 's', x, y, color: COLOR, width: 1.5, dash }],
    legend: false, xDomain: [1, n] }, colors);
  return { ...rec, layout, points: Array.from(x, (xv, i) => layout.toPixel(xv, y[i])) };
}

test('a long series is stroked in pieces of at most 48 segments, fewer than its points', () => {
  const { strokes, points } = draw(undefined);
  const segments = strokes.flatMap((s) => s.path.map((p) => p.length - 1));
  assert.ok(strokes.length > 1, `${strokes.length} strokes`);
  assert.ok(segments.every((k) => k <= 48), `a piece of ${Math.max(...segments)} segments`);
  const total = segments.reduce((a, b) => a + b, 0);
  assert.ok(total < points.length * 0.8, `${total} segments for ${points.length} points`);
});

test('every point left out lies within a pixel of a vertex drawn, and the line ends on the last point', () => {
  const { strokes, points } = draw(undefined);
  const vertices = strokes.flatMap((s) => s.path.flat());
  for (const [px, py] of points) {
    assert.ok(vertices.some(([vx, vy]) => Math.abs(vx - px) <= 1 && Math.abs(vy - py) <= 1), `no vertex near ${px}, ${py}`);
  }
  assert.deepEqual(vertices.at(-1), points.at(-1));
  // Each piece starts where the last ended: one unbroken line.
  for (let i = 1; i < strokes.length; i++) assert.deepEqual(strokes[i].path[0][0], strokes[i - 1].path.at(-1).at(-1));
});

test('a dashed series keeps its dash phase across the pieces, and the context is left as it was', () => {
  const { strokes, state } = draw([6, 3]);
  let run = 0;
  for (const s of strokes) {
    assert.ok(Math.abs(s.offset - run) < 1e-9, `piece stroked at dash offset ${s.offset}, the line's length so far ${run}`);
    assert.deepEqual(s.dash, [6, 3]);
    for (const p of s.path) for (let i = 1; i < p.length; i++) run += Math.hypot(p[i][0] - p[i - 1][0], p[i][1] - p[i - 1][1]);
  }
  assert.equal(state.lineDashOffset, 0);
  assert.deepEqual(state.dash, []);
});

test('a step series with long flat runs is drawn through the same points with a vertex only where it steps', () => {
  // T5's buckets over ±4096 relative positions: 8193 points, a few dozen distinct values.
  const x = Float64Array.from({ length: 8193 }, (_, i) => i - 4096);
  const y = x.map((v) => Math.sign(v) * Math.floor(Math.log2(1 + Math.abs(v)) * 2));
  const rec = recorder();
  const colors = { bg: '#fff', fg: '#000', muted: '#666', grid: '#eee' };
  const layout = drawLines(rec.ctx, 1142, 280, { series: [{ label: 's', x, y, color: COLOR, step: true, dash: [5, 3] }],
    legend: false }, colors);
  const vertices = rec.strokes.flatMap((s) => s.path.flatMap((p, k) => (k === 0 && s !== rec.strokes[0] ? p.slice(1) : p)));
  let steps = 0;
  for (let i = 1; i < y.length; i++) if (y[i] !== y[i - 1]) steps++;
  assert.ok(vertices.length <= 2 * steps + 3, `${vertices.length} vertices for ${steps} steps`);
  // Each point lies within a pixel of the path (a step of less than a pixel may be left out, as for any line).
  const off = ([px, py], [ax, ay], [bx, by]) => {
    const t = Math.max(0, Math.min(1, ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2 || 1)));
    return Math.hypot(px - ax - t * (bx - ax), py - ay - t * (by - ay));
  };
  for (let i = 0; i < x.length; i++) {
    const p = layout.toPixel(x[i], y[i]);
    let near = Infinity;
    for (let k = 1; k < vertices.length; k++) near = Math.min(near, off(p, vertices[k - 1], vertices[k]));
    assert.ok(near <= 1, `point ${i} (${p}) is ${near.toFixed(2)} px off the path`);
  }
  assert.deepEqual(vertices.at(-1), layout.toPixel(x.at(-1), y.at(-1)));
});

test('legendRows counts the rows drawLines lays its legend out in, at 7 px a character', () => {
  const labels = ['none seed 1', 'sinusoidal seed 1', 'learned seed 1', 'rope seed 1', 'alibi seed 1', 't5 seed 1',
    'xpos seed 1', 'kerple_log seed 1', 'kerple_power seed 1', 'fire seed 1', 'cope seed 1', 'irope seed 1',
    'nope_interval seed 1', 'gemma3 seed 1', 'swa_rope_nope seed 1'];
  const x = Float64Array.of(1, 2);
  for (const width of [1142, 800, 550, 358, 200]) {
    // The legend's text is drawn at one y per row: count them.
    const ys = new Set(), rec = recorder();
    const ctx = new Proxy(rec.ctx, { get: (t, k) => (k === 'fillText' ? (text, _x, y) => { if (labels.includes(text)) ys.add(y); } : t[k]) });
    drawLines(ctx, width, 280, { series: labels.map((label) => ({ label, x, y: x, color: COLOR })) }, { bg: '#fff', fg: '#000', muted: '#666', grid: '#eee' });
    assert.equal(legendRows(labels, width), ys.size, `at ${width} px`);
  }
  assert.equal(legendRows([], 500), 0);
});

test('reference labels wider than the plot are wrapped into rows inside it, none over another', () => {
  const hlines = [{ y: 16384, label: 'L_target = 16384', side: 'left' },
    { y: 4096, label: 'L_train = 4096; llama3: longer → × factor', side: 'left' },
    { y: 1024, label: 'llama3: shorter than 1024 → kept', side: 'left' }];
  const x = Float64Array.of(0, 63), y = Float64Array.of(6, 2e5);
  for (const width of [1142, 358, 300]) {
    const layout = drawLines(recorder().ctx, width, 280, { series: [{ label: 's', x, y, color: COLOR }], hlines, yLog: true },
      { bg: '#fff', fg: '#000', muted: '#666', grid: '#eee' });
    const { plot, labels } = layout;
    for (const b of labels) assert.ok(b.left >= plot.x && b.left + b.w <= plot.x + plot.w, `at ${width} px: "${b.text}" runs out`);
    for (const [i, a] of labels.entries()) {
      for (const b of labels.slice(i + 1)) {
        const apart = a.left + a.w <= b.left || b.left + b.w <= a.left || a.top + a.h <= b.top + 1 || b.top + b.h <= a.top + 1;
        assert.ok(apart, `at ${width} px: "${a.text}" over "${b.text}"`);
      }
    }
    // Drawn top to bottom, so in hlines' order: the rows, joined, are the labels.
    assert.equal(labels.map((b) => b.text).join(' '), hlines.map((h) => h.label).join(' '), `at ${width} px`);
    if (width === 300) assert.ok(labels.length > hlines.length, 'nothing was wrapped at 300 px');
  }
  // A wrapped label at the bottom of the plot keeps its last row inside it, under the line or over.
  for (const below of [false, true]) {
    const low = [{ y: 6, label: 'a floor with a label long enough to take two rows at this width', below }];
    const { plot, labels } = drawLines(recorder().ctx, 300, 280, { series: [{ label: 's', x, y, color: COLOR }], hlines: low, yLog: true },
      { bg: '#fff', fg: '#000', muted: '#666', grid: '#eee' });
    assert.ok(labels.length > 1, 'not wrapped');
    for (const b of labels) assert.ok(b.top >= plot.y && b.top + b.h <= plot.y + plot.h + 1, `"${b.text}" at ${b.top} in ${JSON.stringify(plot)}`);
  }
});

test('a series flat but for float rounding (NTK\'s stretch at s = 1) is drawn flat, on a domain around it', () => {
  const x = Float64Array.of(0, 1, 2), y = Float64Array.of(1, 1 + 2 ** -52, 1);
  const layout = drawLines(recorder().ctx, 600, 280, { series: [{ label: 's', x, y, color: COLOR }] },
    { bg: '#fff', fg: '#000', muted: '#666', grid: '#eee' });
  const ys = [0, 1, 2].map((i) => layout.toPixel(x[i], y[i])[1]);
  assert.ok(Math.max(...ys) - Math.min(...ys) < 0.5, `${ys}`);
  assert.ok(ys[0] > layout.plot.y + 20 && ys[0] < layout.plot.y + layout.plot.h - 20, `${ys[0]} in ${JSON.stringify(layout.plot)}`);
});

// The lab's schemes carry a marker each (web/plot/markers.js): an open one is its outline stroked in
// the series' colour at every point, a filled one the same outline filled.
test('a series with a marker draws that shape at every point, stroked when open', () => {
  const rec = recorder();
  const colors = { bg: '#fff', fg: '#000', muted: '#666', grid: '#eee', accent: '#00f' };
  const x = Float64Array.of(1, 2, 3), y = Float64Array.of(1, 3, 2);
  const layout = drawLines(rec.ctx, 600, 280, { series: [{ label: 's', x, y, color: COLOR, points: true,
    marker: { shape: 'square', open: true } }], legend: false }, colors);
  // After the line itself: one closed square per point, 7.2 px wide (0.9 × 4 each side), around it.
  const squares = rec.strokes.slice(1).map((s) => s.path[0]);
  assert.equal(squares.length, 3);
  squares.forEach((sq, i) => {
    const [px, py] = layout.toPixel(x[i], y[i]);
    assert.equal(sq.length, 4);
    assert.deepEqual(sq.map(([a, b]) => [Math.round((a - px) * 10) / 10, Math.round((b - py) * 10) / 10]),
      [[-3.6, -3.6], [3.6, -3.6], [3.6, 3.6], [-3.6, 3.6]]);
  });
});
