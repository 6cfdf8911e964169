// The module Web Worker behind initWorker() in browsers (js/browser.js): its first message carries
// init's options, then it answers js/worker.js's calls.
import { init } from './browser.js';
import { serve } from './worker.js';

self.addEventListener('message', ({ data }) => {
  serve({ postMessage: (msg, transfer) => self.postMessage(msg, transfer), onMessage: (f) => self.addEventListener('message', (e) => f(e.data)) },
    init, data.init);
}, { once: true });
