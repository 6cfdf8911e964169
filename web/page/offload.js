// The heavy part of a few views' computes, at settings where it would hold the page for longer than
// issue 36 allows (a context shift of 2048 keys of 4096 dimensions: about 1.5 s), runs in a Web Worker
// of the page's own (web/page/compute-worker.js) instead. Such a view has that part as its
// `work(pe, args)` and its compute calls offload(id, args) past a size it states: the data once the
// worker has it, else an error with `waiting` set. The view then keeps its last drawing, dimmed, with
// a note that it is computing (web/page/view.js), until the worker answers and the view is drawn
// again. args must be plain data that JSON keeps as it is (numbers, strings, arrays, objects): they
// are copied to the worker, and their JSON is the request's key. Only each view's latest request
// counts; the worker is started at the first one and keeps its modules loaded.

/** Values (rotated: N × head_dim; a learned table's: max_len × d_model) past which context-shift,
 * mrope, rope-2d and learned offload their work: 10–40 ms of it on this machine; their largest
 * settings take 0.2–4 s. */
export const OFFLOAD_VALUES = 2 ** 18;

/** Thrown while a view's data is being computed in the worker. */
class Computing extends Error {
  constructor() {
    super('Computing in the background at these sizes, so the page stays responsive…');
    this.waiting = true;
    this.keepsLast = true;
  }
}

/** redraw(id): draw that view again (the scheduler's refresh). Returns offload(id, args). */
export function createOffload(redraw) {
  let worker = null;
  const jobs = new Map();  // view id → { key, data, error }: the latest asked for; older answers are dropped

  // The worker could not load, or an answer could not be read: every job waiting fails with why, and
  // the next request starts a new worker.
  function broken(message) {
    worker?.terminate();
    worker = null;
    for (const [id, job] of jobs) {
      if (job.data === undefined && job.error === undefined) { job.error = message; redraw(id); }
    }
  }

  function start() {
    const w = new Worker(new URL('./compute-worker.js', import.meta.url), { type: 'module' });
    w.onmessage = ({ data: { id, key, data, error } }) => {
      const job = jobs.get(id);
      if (job?.key !== key) return;
      Object.assign(job, { data, error });
      redraw(id);
    };
    w.onerror = (e) => broken(`The page's compute worker failed${e.message ? `: ${e.message}` : ' to load'}.`);
    w.onmessageerror = () => broken('The page\'s compute worker sent an answer the page could not read.');
    return w;
  }

  return function offload(id, args) {
    const key = JSON.stringify(args);
    const job = jobs.get(id);
    if (job?.key === key) {
      if (job.error !== undefined) throw new Error(job.error);
      if (job.data !== undefined) return job.data;
      throw new Computing();
    }
    worker ??= start();
    worker.postMessage({ id, key, args });
    jobs.set(id, { key, data: undefined, error: undefined });
    throw new Computing();
  };
}
