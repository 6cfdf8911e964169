// The bad-input rule every exported function keeps, as a test each suite registers for its own
// functions (a scheme's suite for the scheme's, hardening.test.mjs for the rest): each bad call
// throws a TypeError or RangeError whose message starts with the function and names the argument,
// with the C++ status kind as err.code, and leaves nothing allocated; a good call after it still
// gives the same answer; 10,000 good calls leave the heap in use flat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pe } from './helpers.mjs';

/**
 * `name` is the message prefix (the function: 'learnedTable.lookup' → 'learnedTable'), `good` a
 * call that must succeed, `bads` [call, error class, what the message must name].
 */
export function badInputTest(name, good, bads) {
  test(`bad input: ${name} throws TypeError/RangeError naming the argument, leaks nothing, and a good call still works`, () => {
    const expected = good();
    const before = pe.heapStats().inUseBytes;
    for (const [i, [call, type, arg]] of bads.entries()) {
      assert.throws(call, (e) => {
        assert.ok(e instanceof type, `${name}: expected ${type.name}, got ${e?.constructor?.name}: ${e?.message}`);
        assert.ok(e.message.startsWith(`${name.split('.')[0]}`), `${name}: message ${JSON.stringify(e.message)} does not start with the function`);
        assert.ok(e.message.includes(arg), `${name}: message ${JSON.stringify(e.message)} does not name ${arg}`);
        assert.ok(['kBadArgument', 'kBadShape', 'kTooLarge'].includes(e.code), `${name}: err.code ${e.code} (${e.message})`);
        return true;
      }, `${name}: bad call ${i} (${arg}) did not throw`);
      assert.deepEqual(good(), expected, `${name}: a good call after a bad one`);
    }
    assert.equal(pe.heapStats().inUseBytes, before, `${name}: heap bytes in use changed across bad calls`);

    const heapBefore = pe.heapStats().heapBytes;
    const inUse = pe.heapStats().inUseBytes;
    for (let i = 0; i < 10000; i++) good();
    assert.equal(pe.heapStats().inUseBytes, inUse, `${name}: heap bytes in use grew over 10,000 calls`);
    assert.ok(pe.heapStats().heapBytes <= Math.max(heapBefore, 16 * 2 ** 20), `${name}: the heap grew over 10,000 calls`);
  });
}
