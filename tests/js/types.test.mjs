// posenc.d.ts against the module: the string unions the types declare are the names the C++ enums
// export (pe.names, pe.lab), so the types cannot drift from what the API accepts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { pe } from './helpers.mjs';

const dts = readFileSync(new URL('../../dist/posenc.d.ts', import.meta.url), 'utf8');

/** The members of `export type Name = 'a' | 'b' ...;` in the declarations. */
function union(name) {
  const m = new RegExp(`export type ${name} =([^;]*);`).exec(dts);
  assert.ok(m, `posenc.d.ts has no type ${name}`);
  return [...m[1].matchAll(/'([^']*)'/g)].map((x) => x[1]);
}

test('posenc.d.ts: the RoPE and lab unions are the names the C++ enums export', () => {
  assert.deepEqual(union('RopeScalingType').filter((t) => t !== 'default').sort(), [...pe.names.ropeScalings].sort());
  assert.ok(union('RopeScalingType').includes('default'));  // HF's name for none, accepted too
  assert.deepEqual(union('RopeLayout'), pe.names.ropeLayouts);
  assert.deepEqual(union('Precision'), pe.names.precisions);
  assert.deepEqual(union('LabScheme'), pe.lab.schemes);
  assert.deepEqual(union('LabTask'), pe.lab.tasks);
  assert.deepEqual(union('LabRopeScaling'), pe.lab.ropeScalings);
  assert.deepEqual(union('StatusCodeName').sort(), ['kBadArgument', 'kBadShape', 'kTooLarge', 'kUnavailable']);
});

test('the argument checks accept exactly those names', () => {
  for (const type of [...pe.names.ropeScalings, 'default']) {
    const params = { headDim: 8, scaling: { type, factor: 2, originalMaxPositionEmbeddings: 16, maxPositionEmbeddings: 64,
      shortFactor: [1, 1, 1, 1], longFactor: [1, 1, 1, 1] } };
    assert.doesNotThrow(() => pe.ropeFrequencies(params), type);
  }
  for (const layout of pe.names.ropeLayouts) assert.doesNotThrow(() => pe.ropeFrequencies({ headDim: 8, layout }));
  for (const precision of pe.names.precisions) {
    assert.doesNotThrow(() => pe.ropeCache({ seqLen: 2, params: { headDim: 8 }, precision }), precision);
  }
  assert.throws(() => pe.ropeFrequencies({ headDim: 8, layout: 'neox' }), /params.layout must be one of 'halfSplit', 'interleaved'/);
});

test("the page's menus offer only names the package exports (web/settings/state.js, web/lab/lab.js)", async () => {
  // The page picks which of them it can draw (no 'proportional' plot); it may not invent one.
  const { FIELDS, SCALINGS } = await import('../../web/settings/state.js');
  const lab = await import('../../web/lab/lab.js');
  for (const s of SCALINGS) assert.ok(pe.names.ropeScalings.includes(s), `web/settings/state.js scaling ${s}`);
  assert.deepEqual(FIELDS.layout.values, pe.names.ropeLayouts);
  for (const p of FIELDS.precision.values) assert.ok(pe.names.precisions.includes(p), `web/settings/state.js precision ${p}`);
  // The lab's menu and colours come from pe.lab.schemes; the palette must have one colour each.
  const page = lab.createLab();
  page.setSchemes(pe.lab.schemes);
  assert.deepEqual(page.schemes(), pe.lab.schemes);
  const colours = pe.lab.schemes.map(page.color);
  assert.equal(new Set(colours).size, colours.length, `one colour per lab scheme: ${colours}`);
});
