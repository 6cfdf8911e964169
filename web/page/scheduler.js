// Redraws, so that nothing blocks the page: only views on screen draw, a frame does at most
// FRAME_BUDGET ms of them (the rest wait a frame), and while a slider drags the slow views wait
// until it pauses (a view is slow by its last drawing after the first, which also compiles it). Each frame gets a fresh memo, so views share work (the sinusoidal table) within
// it. A view's first drawing gets a frame of its own (after one that prepares its canvas, in a frame
// with nothing else to do when the view is near the screen), and a compute slower than half the budget
// is painted in the next frame (view.js: compute, then paint; not while a slider drags), so that
// no frame holds both a slow compute and the drawing and commit of a canvas (issue 36 asks for no
// frame over 50 ms at the defaults; docs/explorer.md has what is measured).
// The status line says how many visible views are drawn and how long the last step took.
const FRAME_BUDGET = 10;   // ms of redraw work per animation frame before the rest waits a frame
const HEAVY = 30;          // ms: a view this slow is redrawn only once a drag pauses
const SETTLE = 180;        // ms without a drag step that count as a pause

// Watches where views are: v.visible (drawn a little before they scroll in, so a drawing moves nothing
// on screen) and v.near (a screen or two away: its canvas prepared, view.js prepare). Returns watch(v).
function watcher(views, schedule) {
  const observer = (key, rootMargin, due) => new IntersectionObserver((entries) => {
    for (const e of entries) {
      const v = views.find((x) => x.section === e.target);
      v[key] = e.isIntersecting;
      if (v[key] && due(v)) schedule();
    }
  }, { rootMargin });
  const visibility = observer('visible', '300px', (v) => v.dirty || v.computed);  // computed data waits for its paint too
  const nearby = observer('near', '1500px 0px', (v) => !v.prepared);
  return (v) => {
    visibility.observe(v.section);
    nearby.observe(v.section);
  };
}

// A frame with nothing else to do (idle) prepares the canvas of one view that is not far off screen.
// True while one waits: the others are prepared in the frames that follow.
function prepareNear(views, idle) {
  const next = views.find((v) => v.near && !v.prepared);
  if (next && idle) next.prepare();
  return Boolean(next);
}

// Every canvas a frame may draw, measured in one pass before any view writes to the page: a size
// read after a write would lay the whole page out again in the middle of the frame (view.js sized).
function measureDue(views) {
  const due = views.filter((v) => v.visible && (v.dirty || v.computed));
  for (const v of due) v.measure();
  return due;
}

// A frame's drawing of the visible views that need it, within its budget from t0 (dragging: a
// slider is being dragged); returns { drawn: how many steps were taken, more: whether some wait for
// the next frame }.
function drawViews(views, ctx, t0, dragging) {
  let more = false, drawn = 0;
  const over = () => drawn > 0 && performance.now() - t0 > FRAME_BUDGET;
  for (const v of views) {
    if (!v.visible || !(v.dirty || v.computed)) continue;
    if (v.computed) {  // computed in the last frame: painted now
      if (over()) { more = true; continue; }
      v.paint();
      drawn += 1;
      if (v.dirty) more = true;  // asked for again (a measurement's next step): computed next frame
      continue;
    }
    // The settle timer brings a slow view back. A first drawing also compiles the view's code, so
    // its time alone does not make a view slow: it is timed again on its next drawing.
    if (dragging && v.cost > HEAVY && v.renders > 1) continue;
    // A first drawing (compiling its code, sizing its canvas) gets a frame of its own, and its
    // canvas is prepared in a frame before it (view.js: the browser's first commit of a canvas).
    if (over() || (drawn > 0 && v.renders === 0)) { more = true; continue; }
    if (!v.prepared) {
      v.prepare();
      drawn += 1;
      more = true;
      continue;
    }
    const t1 = performance.now();
    v.compute(ctx);
    drawn += 1;
    // A slow compute leaves its painting to the next frame: a frame holds one or the other. Not
    // while a slider drags: each step is then drawn in the frame that computed it.
    if (!dragging && performance.now() - t1 > FRAME_BUDGET / 2) { more = true; continue; }
    v.paint();
  }
  return { drawn, more };
}

/**
 * context(): what a view's compute gets besides memo and redraw(id) ({ pe, st, extras, lab, offload }); status: the
 * element for the status line. Returns { track(views), schedule, redrawAll, refresh(id),
 * dragging(active), start() }; track hands it the page's views (view.js) once they are built.
 */
export function createScheduler({ pe, context, status }) {
  const views = [];
  let started = false;  // views may ask for redraws while they are being built: the first schedule() draws them
  let frame = 0, dragging = false, settleTimer = 0;
  let memoTable = new Map();
  const memo = (key, fn) => { if (!memoTable.has(key)) memoTable.set(key, fn()); return memoTable.get(key); };

  function drawFrame() {
    frame = 0;
    const t0 = performance.now();
    performance.mark('frame-start');
    memoTable = new Map();
    const ctx = { ...context(), memo, redraw: refresh };
    const due = measureDue(views);
    let drawn = 0, more = false;
    try {
      ({ drawn, more } = drawViews(views, ctx, t0, dragging));
    } finally {
      for (const v of due) v.measured = null;  // sizes hold for this frame only, also when a view threw
    }
    if (prepareNear(views, !drawn)) more = true;
    for (const v of views) v.section.classList.toggle('stale', (v.dirty || Boolean(v.computed) || Boolean(v.pending)) && v.visible);
    performance.mark('frame-end');
    if (drawn) performance.measure('frame', 'frame-start', 'frame-end');  // one redraw step of the visible views
    const shown = views.filter((v) => v.visible && !v.dirty && !v.computed).length;
    status.textContent = `SIMD: ${pe.simdArch} · threads: ${pe.threads} · ${shown} visible views drawn, `
      + `the last step in ${(performance.now() - t0).toFixed(1)} ms`;
    if (more) schedule();
    else document.body.dataset.ready = 'true';
  }

  function schedule() {
    if (!frame) frame = requestAnimationFrame(drawFrame);
  }

  // A view whose data changed outside the settings (the lab's runs, a file it fetched): redrawn when visible.
  function refresh(id) {
    const v = views.find((x) => x.def.id === id);
    if (!v) return;
    v.dirty = true;
    if (started) schedule();
  }

  const watch = watcher(views, schedule);

  return {
    track(built) {
      for (const v of built) {
        views.push(v);
        watch(v);
      }
    },
    schedule,
    redrawAll() {
      // Data computed and not yet painted is painted first (a frame late), then computed again:
      // changes at every frame (a window resized) cannot keep a slow view from being drawn.
      for (const v of views) v.dirty = true;
      schedule();
    },
    refresh,
    /** A drag step (true) or a committed change (false): slow views wait for the drag to pause. */
    dragging(active) {
      dragging = active;
      clearTimeout(settleTimer);
      if (dragging) settleTimer = setTimeout(() => { dragging = false; schedule(); }, SETTLE);
    },
    start() {
      started = true;
      schedule();
    },
  };
}
