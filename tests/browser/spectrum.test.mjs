// The spectrum view's reference lines under llama3 (web/views/spectrum.js): a wavelength bound of
// llama3's at the same wavelength as another line (L_train itself at low_freq_factor 1, Llama 3.1's)
// is one line naming both, not a second line drawn over it; every bound is still named. Node runs the view's compute
// with the real package (the view holds no DOM code).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from 'posenc';
import { defaults } from '../../web/settings/state.js';
import spectrum from '../../web/views/spectrum.js';

const pe = await init();

test('spectrum under llama3: one line per wavelength, each of L_train, L_target and llama3\'s bounds named on one', () => {
  const cases = [[1, 4], [2, 4], [1, 1.5], [1, 1], [0.5, 1], [2, 2], [0.25, 4]];
  for (const [lowFreq, highFreq] of cases) {
    const st = { ...defaults(), scaling: 'llama3', lowFreq, highFreq };
    const { hlines } = spectrum.compute({ pe, st, extras: {} });
    const ys = hlines.map((h) => h.y), at = (y) => hlines.find((h) => h.y === y)?.label ?? '';
    assert.equal(new Set(ys).size, ys.length, `low ${lowFreq}, high ${highFreq}: ${JSON.stringify(hlines)}`);
    const low = st.lTrain / lowFreq, high = st.lTrain / highFreq;
    assert.match(at(st.lTrain), new RegExp(`L_train = ${st.lTrain}`));
    assert.match(at(st.lTarget), new RegExp(`L_target = ${st.lTarget}`));
    assert.match(at(low), new RegExp(`llama3: longer than ${low.toFixed(0)} → × factor`));
    assert.match(at(high), new RegExp(`llama3: shorter than ${high.toFixed(0)} → kept`));
  }
  // Llama 3.1's factors: the bound at L_train shares its line.
  const { hlines } = spectrum.compute({ pe, st: { ...defaults(), scaling: 'llama3' }, extras: {} });
  assert.deepEqual(hlines.map((h) => h.label), ['L_train = 4096; llama3: longer than 4096 → × factor', 'L_target = 16384',
    'llama3: shorter than 1024 → kept']);
});
