// The page's shared matrix products (web/views/shared/vectors.js holds no DOM code, so Node runs it
// directly): worked by hand on small integers, and the shortcuts (a symmetric product summed once,
// a block of a taller matrix) give the numbers the plain product gives, bit for bit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dotRows, project } from '../../web/views/shared/vectors.js';

test('dotRows: rows of a times rows of b, [n][m]', () => {
  const a = Float32Array.of(1, 2, 3, 4, 5, 6);   // [2][3]
  const b = Float32Array.of(1, 0, -1, 2, 1, 0, 0, 0, 1);  // [3][3]
  assert.deepEqual([...dotRows(a, b, 2, 3, 3)], [-2, 4, 3, -2, 13, 6]);
  assert.deepEqual([...dotRows(a, a, 2, 2, 3)], [14, 32, 32, 77]);
});

test('dotRows: a product of a with itself, summed once per pair, is the plain product', () => {
  const n = 37, d = 29;
  const a = Float32Array.from({ length: n * d }, (_, i) => Math.sin(i * 0.731) * 3.1);
  assert.deepEqual(dotRows(a, a, n, n, d), dotRows(a, a.slice(), n, n, d));
  assert.deepEqual(dotRows(a, a, n, 5, d), dotRows(a, a.slice(), n, 5, d));  // not square: every pair summed
});

test('project: rows times a block of rows of w, [n][m]', () => {
  const rows = Float32Array.of(1, 2, 3, 4);  // [2][2]
  const w = Float32Array.of(9, 9, 9, 1, 0, 2, 0, 1, 3);  // [3][3]: rows 1 and 2 are the block
  assert.deepEqual([...project(rows, 2, 2, w, 3, 1)], [1, 2, 8, 3, 4, 18]);
  const n = 5, d = 11, m = 7, r0 = 4;
  const x = Float32Array.from({ length: n * d }, (_, i) => Math.cos(i * 1.37));
  const tall = Float32Array.from({ length: (r0 + d + 3) * m }, (_, i) => Math.sin(i * 0.41));
  assert.deepEqual(project(x, n, d, tall, m, r0), project(x, n, d, tall.slice(r0 * m, (r0 + d) * m), m));
});
