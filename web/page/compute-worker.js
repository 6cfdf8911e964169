// The page's compute worker (web/page/offload.js): loads the package itself (one thread: the work
// is off the page's thread, not faster) and runs a view's `work(pe, args)` for the page, posting
// back its data or its error. Only the latest request of each view is run: of the requests a slider
// drag sent while a computation ran, all but the last are dropped.
import { init } from '../../dist/browser.js';

// The views that offload: each one's module, loaded when it is first asked for.
const WORK = {
  'context-shift': () => import('../views/context-shift.js'),
  learned: () => import('../views/learned.js'),
  mrope: () => import('../views/mrope.js'),
  'rope-2d': () => import('../views/rope-2d.js'),
  'rope-relative': () => import('../views/rope-relative.js'),
};
const ready = init();
const latest = new Map();  // view id → its latest request not yet run
let running = false;

async function runLatest() {
  running = true;
  try {
    const pe = await ready;
    while (latest.size) {
      const [id, { key, args }] = latest.entries().next().value;
      latest.delete(id);
      try {
        const view = await WORK[id]();
        self.postMessage({ id, key, data: view.default.work(pe, args) });
      } catch (e) {
        self.postMessage({ id, key, error: e.message ?? String(e) });
      }
      // A task's pause, so that requests sent during the computation can replace the next one (in
      // practice they arrive first; the order of message and timer tasks is not specified).
      await new Promise((resolve) => setTimeout(resolve));
    }
  } catch (e) {
    for (const [id, { key }] of latest) self.postMessage({ id, key, error: e.message ?? String(e) });
    latest.clear();
  } finally {
    running = false;
  }
}

self.onmessage = ({ data: { id, key, args } }) => {
  latest.set(id, { key, args });
  if (!running) runLatest();
};
