// The page's RoPE rule (ropeRule, web/settings/rope-settings.js) against the package's own checks:
// at d_model, partial rotary and llama3 factors across their controls' ranges, the page refuses a
// setting in words exactly when the package refuses its frequencies, for each scaling. Node runs
// the settings module with the real package (it holds no DOM code).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from 'posenc';
import { defaults, SCALINGS } from '../../web/settings/state.js';
import { dModelRule, evenDModel, evenPartial, partialRule, ropeParams, ropeRule } from '../../web/settings/rope-settings.js';

const pe = await init();
const accepts = (params) => { try { pe.ropeFrequencies(params); return true; } catch { return false; } };

test('ropeRule refuses exactly what ropeFrequencies refuses, for the unscaled frequencies and each scaling', () => {
  let refused = 0, cases = 0;
  for (const dModel of [2, 4, 6, 8, 10, 64, 100, 128, 4096]) {
    for (const partial of [0.01, 0.02, 0.03, 0.1, 0.25, 0.3, 0.33, 0.5, 0.51, 0.75, 1]) {
      for (const [lowFreq, highFreq] of [[1, 4], [4, 1], [2, 2], [0.01, 1000]]) {
        const st = { ...defaults(), dModel, partial, lowFreq, highFreq };
        for (const scaling of SCALINGS.filter((s) => s !== 'longrope')) {
          const rule = ropeRule(st, scaling), ok = accepts(ropeParams(st, {})) && accepts(ropeParams(st, {}, scaling));
          assert.equal(rule === '', ok, `d_model ${dModel}, partial ${partial}, ${scaling} (${lowFreq}, ${highFreq}): "${rule}"`);
          if (rule) assert.match(rule, /\d/);  // it gives the numbers
          refused += !ok;
          cases += 1;
        }
      }
    }
  }
  assert.ok(refused > 0 && refused < cases, `${refused} of ${cases}`);
  // Each kind of refusal, in words with its numbers: odd d_model, an odd or too narrow rotated
  // width, NTK at width 2, llama3's factors in the wrong order.
  assert.match(ropeRule({ ...defaults(), dModel: 7 }), /must be even; 7 is odd/);
  assert.match(ropeRule({ ...defaults(), partial: 0.01 }), /rotates 1 dimension \(/);
  assert.match(ropeRule({ ...defaults(), dModel: 2 }, 'ntk'), /^NTK .* rotate 2 dimensions/);
  assert.equal(ropeRule({ ...defaults(), dModel: 2 }, 'none'), '');
  assert.match(ropeRule({ ...defaults(), lowFreq: 4, highFreq: 1 }, 'llama3'), /high_freq_factor \(1\) may not be below its low_freq_factor \(4\)/);
});

test('LongRoPE\'s per-pair factors fit the rotated width they came with, else the page says so in words', () => {
  const f = (n) => ({ shortFactor: new Array(n).fill(1), longFactor: new Array(n).fill(1.5) });
  const st = { ...defaults(), scaling: 'longrope', dModel: 96 };
  assert.doesNotThrow(() => pe.ropeFrequencies(ropeParams(st, { longFactors: f(48) }, 'longrope')));
  assert.throws(() => ropeParams({ ...st, dModel: 128 }, { longFactors: f(48) }, 'longrope'),
    /^Error: LongRoPE's per-pair factors came with the model: 48 pairs, and these settings rotate 64 \(d_model 128 × partial rotary 1\)/);
  assert.throws(() => ropeParams({ ...st, partial: 0.5 }, { longFactors: f(48) }, 'longrope'), /rotate 24 /);
});

test('the partial rotary box refuses what ropeRule refuses of it, and evenPartial gives a width both accept', () => {
  for (const dModel of [2, 4, 8, 64, 100, 128, 130, 4096]) {
    for (let k = 1; k <= 200; k++) {
      const v = k / 200, st = { ...defaults(), dModel, partial: v };
      assert.equal(partialRule(v, st) === '', ropeRule(st, 'none') === '', `d_model ${dModel}, partial ${v}`);
      const c = evenPartial(v, dModel);
      assert.equal(ropeRule({ ...st, partial: c }, 'none'), '', `d_model ${dModel}: ${v} → ${c}`);
      if (dModel >= 8 && v >= 2 / dModel) assert.ok(Math.abs(c - v) <= 1.5 / dModel, `d_model ${dModel}: ${v} → ${c}`);
    }
  }
  assert.equal(evenPartial(0.58, 100), 0.585);  // 0.58 × 100 is 57.99…: HF rotates 57
  assert.match(partialRule(0.06, { ...defaults(), dModel: 128 }), /^partial rotary: 0\.06 × d_model 128 rotates 7 dimensions .* e\.g\. 0\.0625$/);
});

test('the d_model box refuses what the package refuses under the partial rotary set, and evenDModel gives the nearest it accepts', () => {
  let refused = 0;
  const packageTakes = (st) => accepts(ropeParams(st, {}));
  for (const partial of [0.05, 0.1, 0.25, 0.3, 0.33, 0.4, 0.5, 0.58, 0.75, 0.99, 1]) {
    for (let dModel = 2; dModel <= 4096; dModel += dModel < 300 ? 2 : 98) {
      const st = { ...defaults(), dModel, partial }, rule = dModelRule(dModel, { ...defaults(), partial });
      assert.equal(rule === '', packageTakes(st), `d_model ${dModel}, partial ${partial}: "${rule}"`);
      refused += rule !== '';
      const c = evenDModel(dModel, partial);
      assert.ok(packageTakes({ ...st, dModel: c }), `partial ${partial}: ${dModel} → ${c}`);
      const gap = Math.abs(c - dModel);
      for (let e = Math.max(2, dModel - gap + 2); e < dModel + gap; e += 2) {  // none nearer would do
        assert.ok(!packageTakes({ ...st, dModel: e }), `partial ${partial}: ${dModel} → ${c}, not ${e}`);
      }
    }
  }
  assert.ok(refused > 0);
  assert.equal(dModelRule(100, { ...defaults(), partial: 1 }), '');
  assert.equal(dModelRule(101, { ...defaults(), partial: 0.25 }), '');  // odd: the field's own rule says it
  assert.match(dModelRule(100, { ...defaults(), partial: 0.25 }, 'head_dim'),
    /^head_dim: 100 × partial rotary 0\.25 rotates 25 dimensions .* e\.g\. head_dim 98, or change partial rotary \(the RoPE chapter's settings\)$/);
});
