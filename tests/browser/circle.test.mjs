// The labels at the tips of the circle panel's vectors (web/plot/panels.js holds no DOM code, so
// Node runs it on a canvas context that records where text is written): q and k pointing the same
// way (rope-rotation at m = 200000, n = 100000, pair 2047 of d_model 4096) once printed their labels
// on top of each other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drawPanels } from '../../web/plot/panels.js';

// A context that records each fillText as { text, x, y }; text is 7 px a character wide.
function recorder() {
  const texts = [], state = {};
  const ctx = new Proxy({}, {
    get(_, k) {
      if (k === 'measureText') return (t) => ({ width: 7 * String(t).length });
      if (k === 'fillText') return (text, x, y) => texts.push({ text, x, y });
      if (k in state) return state[k];
      return () => {};
    },
    set(_, k, v) { state[k] = v; return true; },
  });
  return { ctx, texts };
}

const colors = { bg: '#ffffff', fg: '#000000', muted: '#666666', grid: '#eeeeee', accent: '#0000ff' };

function labelsAt(angles, width = 520) {
  const rec = recorder();
  const vectors = angles.map((a, k) => ({ x: Math.cos(a), y: Math.sin(a), color: '#0072B2', label: `vector ${k} at ${a.toFixed(3)} rad` }));
  drawPanels(rec.ctx, width, 320, { panels: [{ title: 't', kind: 'circle', spec: { vectors, radius: 1.2 } }] }, colors);
  return rec.texts.filter((t) => t.text.startsWith('vector')).map((t) => ({ ...t, w: 7 * t.text.length }));
}

const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && Math.abs(a.y - b.y) < 14;

test('labels of vectors pointing the same way, or nearly, do not overlap; apart, each stays at its tip', () => {
  for (const angles of [[0.3, 0.3], [0.3, 0.301], [-1.2, -1.2001, -1.19], [Math.PI / 2, Math.PI / 2], [-Math.PI / 2, -Math.PI / 2 + 0.01],
    [3, 3.001, 3.002, 3.003]]) {
    const labels = labelsAt(angles);
    assert.equal(labels.length, angles.length);
    for (let i = 0; i < labels.length; i++) {
      for (let j = i + 1; j < labels.length; j++) assert.ok(!overlap(labels[i], labels[j]), `${angles}: ${labels[i].text} / ${labels[j].text}`);
    }
  }
  // Far apart, neither moves: each where it is when drawn alone.
  const [a, b] = labelsAt([0.3, 2.5]);
  assert.deepEqual([a.x, a.y], [labelsAt([0.3])[0].x, labelsAt([0.3])[0].y]);
  assert.deepEqual([b.x, b.y], [labelsAt([2.5])[0].x, labelsAt([2.5])[0].y]);
});
