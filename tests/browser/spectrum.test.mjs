// The spectrum view's reference lines under llama3 (web/views/spectrum.js): a wavelength bound of
// llama3's that is L_train itself (low_freq_factor 1, Llama 3.1's) is one line saying both, not a
// second line drawn over L_train's; every bound is still on the plot. Node runs the view's compute
// with the real package (the view holds no DOM code).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from 'posenc';
import { defaults } from '../../web/settings/state.js';
import spectrum from '../../web/views/spectrum.js';

const pe = await init();

test('spectrum under llama3: one line per wavelength, each of L_train, L_target and llama3\'s bounds on one', () => {
  for (const [lowFreq, highFreq] of [[1, 4], [2, 4], [1, 1.5]]) {
    const st = { ...defaults(), scaling: 'llama3', lowFreq, highFreq };
    const { hlines } = spectrum.compute({ pe, st, extras: {} });
    const ys = hlines.map((h) => h.y);
    assert.equal(new Set(ys).size, ys.length, `low ${lowFreq}, high ${highFreq}: ${JSON.stringify(hlines)}`);
    for (const y of [st.lTrain, st.lTarget, st.lTrain / lowFreq, st.lTrain / highFreq]) assert.ok(ys.includes(y), `${y}`);
    const train = hlines.find((h) => h.y === st.lTrain).label;
    assert.match(train, lowFreq === 1 ? /^L_train = \d+; llama3: longer → ÷ factor$/ : /^L_train = \d+$/);
  }
});
