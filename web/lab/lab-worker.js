// One lab run in a Web Worker (web/lab/lab.js starts one per scheme): loads the package itself, trains
// and evaluates with pe.lab.run, and posts the losses as it goes (batched, a few times a second)
// and the result at the end. The page terminates the worker to cancel.
import { init } from '../../dist/browser.js';

const POST_EVERY = 100;  // ms
const ready = init();

self.onmessage = async ({ data: { options } }) => {
  try {
    const pe = await ready;
    let batch = [], last = 0, t0 = 0;
    const result = pe.lab.run(options, ({ step, totalSteps, loss }) => {
      const now = performance.now();
      if (!t0) t0 = now;
      batch.push(loss);
      if (now - last >= POST_EVERY || step + 1 === totalSteps) {
        self.postMessage({ type: 'progress', step: step + 1, total: totalSteps, losses: batch, elapsed: now - t0 });
        batch = [];
        last = now;
      }
    });
    const transfer = result.results.map((r) => r.trainLoss.buffer);
    self.postMessage({ type: 'done', result }, transfer);
  } catch (e) {
    self.postMessage({ type: 'error', message: e.message ?? String(e) });
  }
};
