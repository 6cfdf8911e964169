// The thread behind initWorker() in Node (js/node.js): a posenc module answering js/worker.js's calls.
import { parentPort, workerData } from 'node:worker_threads';
import { init } from './node.js';
import { serve } from './worker.js';

serve({ postMessage: (msg, transfer) => parentPort.postMessage(msg, transfer), onMessage: (f) => parentPort.on('message', f) },
  init, workerData);
