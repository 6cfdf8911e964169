// The plot cursors' moves across panels (web/plot/cursor.js, no DOM: Node runs it): the big steps
// undo each other across a panel's end, and up and down go to the panel drawn there. Every view's
// keys are checked as drawn in the browser by keys.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { moveLinePanelGrid, moveLinePanels, moveStripPanels, panelToward } from '../../web/plot/cursor.js';

test('PageDown undoes PageUp across a panel\'s end, and single steps cross it one point at a time', () => {
  const counts = [5, 5, 3];
  for (const start of [{ panel: 0, i: 1 }, { panel: 0, i: 4 }, { panel: 1, i: 3 }]) {
    const up = moveLinePanels(start, counts, 'PageUp');
    assert.deepEqual(moveLinePanels(up, counts, 'PageDown'), start, JSON.stringify(up));
  }
  assert.deepEqual(moveLinePanels({ panel: 0, i: 4 }, counts, 'ArrowRight'), { panel: 1, i: 0 });
  assert.deepEqual(moveLinePanels({ panel: 1, i: 0 }, counts, 'ArrowLeft'), { panel: 0, i: 4 });
  // With no key (the data changed under the cursor) it stays in its panel, at the panel's last point.
  assert.deepEqual(moveLinePanels({ panel: 0, i: 9 }, counts, ''), { panel: 0, i: 4 });
  // At the ends of the first and the last panel the cursor stays.
  assert.deepEqual(moveLinePanels({ panel: 2, i: 1 }, counts, 'PageUp'), { panel: 2, i: 2 });
  assert.deepEqual(moveLinePanels({ panel: 0, i: 2 }, counts, 'PageDown'), { panel: 0, i: 0 });
});

test('up and down go to the panel drawn above or below, in two columns and in one', () => {
  // Four panels two a row (a desktop), then stacked (a phone), as drawPanels lays them out.
  const grid = { panels: [[0, 0], [300, 0], [0, 200], [300, 200]].map(([x, y]) => ({ box: { x, y, w: 290, h: 190 } })) };
  const stack = { panels: [0, 200, 400, 600].map((y) => ({ box: { x: 0, y, w: 290, h: 190 } })) };
  assert.equal(panelToward(grid, 0, 'ArrowDown'), 2);
  assert.equal(panelToward(grid, 1, 'ArrowDown'), 3);
  assert.equal(panelToward(grid, 3, 'ArrowUp'), 1);
  assert.equal(panelToward(grid, 0, 'ArrowUp'), 0, 'nothing above');
  assert.equal(panelToward(grid, 0, 'ArrowRight'), 1);
  assert.equal(panelToward(stack, 1, 'ArrowDown'), 2);
  assert.equal(panelToward(stack, 3, 'ArrowDown'), 3, 'nothing below');
  assert.equal(panelToward(null, 1, 'ArrowDown'), 1, 'no layout drawn yet');
  // Three panels two a row: from the top right, down goes to the one below on the left.
  const three = { panels: grid.panels.slice(0, 3) };
  assert.equal(panelToward(three, 1, 'ArrowDown'), 2);
  assert.equal(panelToward(three, 2, 'ArrowUp'), 0, 'the one in line first');
  // The point is kept where the panel below has it, and clamped where it has fewer.
  assert.deepEqual(moveLinePanelGrid({ panel: 1, i: 4 }, [5, 5, 5, 2], 'ArrowDown', grid), { panel: 3, i: 1 });
});

test('a strip above panels of maps: down into panel 0, up from the top panels back to the strip', () => {
  // rope-2d's strip of 8 pairs over two 4 × 3 maps, side by side, row 0 drawn at the top.
  const maps = [{ nx: 4, ny: 3, down: true }, { nx: 4, ny: 3, down: true }];
  const side = { panels: [0, 300].map((x) => ({ box: { x, y: 0, w: 290, h: 190 } })) };
  assert.deepEqual(moveStripPanels({ panel: -1, x: 6, y: 0 }, 8, maps, 'ArrowDown', side), { panel: 0, x: 3, y: 0 });
  assert.deepEqual(moveStripPanels({ panel: 1, x: 2, y: 0 }, 8, maps, 'ArrowUp', side), { panel: -1, x: 2, y: 0 });
  assert.deepEqual(moveStripPanels({ panel: 1, x: 2, y: 1 }, 8, maps, 'ArrowUp', side), { panel: 1, x: 2, y: 0 });
  assert.deepEqual(moveStripPanels({ panel: 0, x: 2, y: 1 }, 8, maps, 'ArrowDown', side), { panel: 0, x: 2, y: 2 });
  // Stacked (a phone): down from the bottom row of the first map into the top row of the second.
  const stacked = { panels: [0, 200].map((y) => ({ box: { x: 0, y, w: 290, h: 190 } })) };
  assert.deepEqual(moveStripPanels({ panel: 0, x: 2, y: 2 }, 8, maps, 'ArrowDown', stacked), { panel: 1, x: 2, y: 0 });
  assert.deepEqual(moveStripPanels({ panel: -1, x: 1, y: 0 }, 8, maps, 'ArrowUp', stacked), { panel: -1, x: 1, y: 0 });
});
