// One view on the page: its <section data-view> (index.html gives its title and explanation),
// its own controls next to the plot, the canvas with a cursor moved by mouse, finger or pen
// (pointer events: hover, tap, drag) and by the keyboard (arrows; PageUp/PageDown and Home/End in
// big steps), the exact read-out, a note (sampling, refusals), HTML after the plot (a table there
// that is wider than the screen says that it scrolls), and PNG/CSV export and a data table. A view definition (web/views/<id>.js, its default export):
// { id, controls ([key, options]; options.values may be host → list), compute(ctx) → data,
//   plot(data, cursor, width) → { kind, spec }, height?(width),
//   readout(data, cursor, st), csv(data), caption(st, host), cursor0(data), move?(data, cursor, key, layout)
//   (layout: what the plot's drawing returned, or null),
//   note?(data), html?(data, ctx) (HTML after the plot; data null when it cannot be drawn),
//   table?: true (no canvas, render(data) → HTML), setup?(section, host) (extra controls),
//   rendered?(data, section) (after each drawing: updates DOM that setup made; data null on error),
//   work?(pe, args) → data (the heavy part of compute, which the page's worker runs: web/page/offload.js) }.
// plot gets a 4th argument { exporting: true } when it draws the PNG export.
// ctx: { pe, st, extras, lab, offload(id, args), memo, redraw(id) } (web/page/scheduler.js, web/main.js); host:
// web/page/chapters.js. A compute that throws an error with `waiting` set (the lab's LabLoading, a
// computation in the worker) is waiting for data: said, not a failure.
import { buildControl } from './controls.js';
import { moveGrid, moveIndex } from '../plot/cursor.js';
import { drawMessage, themeColors } from '../plot/core.js';
import { drawHeatmap } from '../plot/heatmap.js';
import { drawLines } from '../plot/lines.js';
import { drawPanels } from '../plot/panels.js';
import { scrollHints } from '../views/shared/html.js';

const DRAW = { heatmap: drawHeatmap, lines: drawLines, panels: drawPanels };
const KEYS = new Set(['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End']);

function drawInto(ctx, width, height, plot, colors) {
  if (plot.kind === 'custom') return plot.spec.draw(ctx, width, height, plot.spec, colors);
  return DRAW[plot.kind](ctx, width, height, plot.spec, colors);
}

function defaultMove(data, cursor, key) {
  if ('x' in cursor) return moveGrid(cursor, data.nx, data.ny, key, data.yDown);
  return moveIndex(cursor, data.xs.length, key);
}

function csvTable(csv, limit = 200) {
  const lines = csv.trim().split('\n').filter((l) => !l.startsWith('#'));
  const esc = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const head = lines[0].split(',').map((h) => `<th scope="col">${esc(h)}</th>`).join('');
  const cells = (l) => l.split(',').map((c) => `<td>${esc(c)}</td>`).join('');
  const rows = lines.slice(1, limit + 1).map((l) => `<tr>${cells(l)}</tr>`).join('');
  const more = lines.length - 1 > limit ? `<p>First ${limit} of ${lines.length - 1} rows; the CSV has them all.</p>` : '';
  return `<table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>${more}`;
}

function download(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

const CANVAS_HELP = 'Arrow keys move the cursor, PageUp/PageDown and Home/End in big steps; '
  + 'the read-out below gives the exact value.';
// The hint under a plot, for the pointer the reader has: a touch screen has no hover.
const COARSE = '(pointer: coarse)';
const readoutHint = () => (window.matchMedia(COARSE).matches
  ? 'Tap the plot, or drag a finger across it, for exact values.'
  : 'Hover, or focus and use the arrow keys, for exact values.');

// Rewrites `box` (fill), keeping open the <details data-keep="name"> the reader opened in it.
function keepOpen(box, fill) {
  const open = new Set([...box.querySelectorAll('details[data-keep][open]')].map((d) => d.dataset.keep));
  fill();
  for (const d of box.querySelectorAll('details[data-keep]')) if (open.has(d.dataset.keep)) d.open = true;
}

// What follows the title and the explanation in a view's section. A plot's exports sit on its
// read-out's line (a wide screen has room for both); a table view's under the table.
function viewBody(def) {
  const png = '<button type="button" data-export="png1">PNG 1×</button>'
    + '<button type="button" data-export="png2">PNG 2×</button>';
  // The data table scrolls: focusable, so a keyboard can scroll it, and named for its view.
  const table = '<details class="table"><summary>Show data table</summary><div class="table-body" tabindex="0" role="region"></div></details>';
  const actions = `<div class="actions">${def.table ? '' : png}<button type="button" data-export="csv">CSV</button>`
    + `${def.table ? '' : table}</div>`;
  const plot = def.table ? '<div class="view-table"></div>' : `<figure>
      <canvas tabindex="0" role="img"></canvas>
      <figcaption><output class="readout" aria-live="polite">${readoutHint()}</output>${actions}</figcaption>
    </figure>`;
  return `
    <div class="view-controls"></div>
    ${plot}
    <p class="note" hidden></p>
    <div class="view-html"></div>
    ${def.table ? actions : ''}`;
}

// A view's canvas at the size it is shown (CSS pixels, times the screen's pixel ratio): its 2-D
// context, set to draw in CSS pixels, and that size. Within a frame the size is the one measured at
// its start (v.measured: scheduler.js), before any view wrote to the page.
function sized(v) {
  const shown = v.measured ?? { width: v.canvas.clientWidth, height: v.canvas.clientHeight };
  const width = shown.width || 300;
  // A height of the view's own is set, not read back (a read after the write would lay the page out again).
  const own = v.def.height?.(width, v.data);
  if (own !== undefined && v.canvas.style.height !== `${own}px`) v.canvas.style.height = `${own}px`;
  const height = own ?? (shown.height || 300);
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(width * dpr)), h = Math.max(1, Math.round(height * dpr));
  if (v.canvas.width !== w || v.canvas.height !== h) { v.canvas.width = w; v.canvas.height = h; }
  const ctx = v.canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx, width, height };
}

/**
 * Sets each view's canvas to its own height (def.height at its width) before anything is drawn, so
 * that a first drawing on screen moves nothing below it (the stylesheet's 280 px stand in until
 * then). The widths are read in one pass (one layout), the heights written in another; a canvas not
 * laid out (in a closed fold) keeps its height until it is drawn.
 */
export function reserveHeights(views) {
  const widths = views.map((v) => (v.canvas && v.def.height ? v.canvas.clientWidth : 0));
  views.forEach((v, k) => { if (widths[k]) v.canvas.style.height = `${v.def.height(widths[k], null)}px`; });
}

// A view's data for the frame's context (its compute), or the error it gave; the view is then no
// longer dirty, and v.computed (the context) says that its data waits to be painted.
function computeView(v, ctx) {
  const t0 = performance.now();
  v.waiting = false;  // data on its way (the lab's run, the page's worker): said, not a failure
  v.pending = null;
  try {
    v.data = v.def.compute(ctx);
    v.error = null;
  } catch (e) {
    v.waiting = Boolean(e.waiting);
    // Data computed in the page's worker (offload.js): the last drawing stays, dimmed, with the note.
    if (e.keepsLast && v.data) v.pending = e.message;
    else {
      v.error = v.waiting ? e.message : `This view cannot be drawn with these settings. ${e.message}`;
      v.data = null;
    }
  }
  v.dirty = false;
  v.computed = ctx;
  v.cost = performance.now() - t0;
}

/**
 * Builds the view into its `section` (<section data-view> with its <h3> title and explanation).
 * host: { pe, lab, state(), extras, onChange(key, value, commit), refresh(id), loadLearned(table) }.
 */
export function createView(def, section, host) {
  const heading = section.querySelector('h3');
  heading.id = `${def.id}-title`;
  section.id ||= `view-${def.id}`;  // what the contents and the errata link to
  section.setAttribute('aria-labelledby', heading.id);
  section.insertAdjacentHTML('beforeend', viewBody(def));
  section.querySelector('canvas')?.setAttribute('aria-label', `${heading.textContent}. ${CANVAS_HELP}`);
  section.querySelector('.table-body')?.setAttribute('aria-label', `${heading.textContent}: data table`);
  const controlsBox = section.querySelector('.view-controls');
  const controls = (def.controls ?? []).map(([key, o]) => {
    // values may come from the package (host.pe, host.lab): a function of the host.
    const c = buildControl(key, typeof o.values === 'function' ? { ...o, values: o.values(host) } : o, host.onChange);
    controlsBox.append(c.element);
    return c;
  });
  def.setup?.(section, host);
  controlsBox.hidden = controlsBox.childElementCount === 0;
  const v = {
    def, section, controls, dirty: true, visible: false, cursor: null, data: null, layout: null, error: null, cost: 0,
    computed: null, waiting: false, pending: null, near: false, measured: null,
    canvas: section.querySelector('canvas'), readout: section.querySelector('.readout'),
    note: section.querySelector('.note'), html: section.querySelector('.view-html'), renders: 0,
  };
  v.prepared = !v.canvas;  // a table has no canvas to prepare
  // The canvas's size, read for a frame before any drawing in it (scheduler.js); null outside frames.
  v.measure = () => { v.measured = v.canvas ? { width: v.canvas.clientWidth, height: v.canvas.clientHeight } : null; };

  function showReadout() {
    if (v.readout && v.cursor && v.data) v.readout.textContent = def.readout(v.data, v.cursor, host.state());
  }

  function draw(colors = themeColors(v.canvas)) {
    if (!v.canvas) return;
    const { ctx, width, height } = sized(v);
    v.layout = v.error ? drawMessage(ctx, width, height, v.error, colors)
      : drawInto(ctx, width, height, def.plot(v.data, v.cursor, width), colors);
  }

  v.sync = (st, external) => { for (const c of controls) c.sync(st, external); };
  v.stopPlay = () => { for (const c of controls) c.stop?.(false); };

  // A drawing in two steps, which the scheduler may run in two frames (a slow compute, a first
  // drawing): compute (computeView) and paint (the canvas and the DOM after it).
  v.compute = (ctx) => computeView(v, ctx);

  // Before the first drawing, in a frame of its own: the canvas sized and touched. The browser's first
  // commit of a canvas (allocating the buffer it is shown from) costs about as much as a drawing; a canvas
  // prepared a frame or more before its drawing leaves that cost out of the drawing's frame.
  v.prepare = () => {
    v.prepared = true;
    if (v.canvas) sized(v).ctx.clearRect(0, 0, 1, 1);
  };

  const refillHtml = scrollHints(v.html);  // tables after the plot: their scroll hints
  v.paint = () => {
    const t0 = performance.now(), ctx = v.computed, { waiting } = v;
    v.computed = null;
    section.classList.toggle('failed', Boolean(v.error) && !waiting);
    section.toggleAttribute('data-waiting', waiting);  // for the tests: a drawing that waits for data
    if (v.data && v.cursor) v.cursor = (def.move ?? defaultMove)(v.data, v.cursor, '', v.layout);
    // Focused before its first drawing (keyboard users tab ahead): the cursor appears once there is data.
    if (v.data && !v.cursor && v.canvas && document.activeElement === v.canvas) v.cursor = def.cursor0(v.data);
    if (def.table) {
      const box = v.section.querySelector('.view-table');
      keepOpen(box, () => { box.innerHTML = v.error ? `<p class="message bad">${v.error}</p>` : def.render(v.data); });
    }
    else if (!v.pending) draw(ctx.memo('theme-colors', () => themeColors(v.canvas)));  // one getComputedStyle a frame
    const note = v.error ?? v.pending ?? (v.data && def.note ? def.note(v.data) : '');
    v.note.textContent = note;
    v.note.hidden = !note;
    v.note.classList.toggle('bad', Boolean(v.error) && !waiting);
    if (def.html) refillHtml(() => keepOpen(v.html, () => { v.html.innerHTML = def.html(v.data, ctx); }));
    def.rendered?.(v.data, section);
    v.renders += 1;
    section.dataset.renders = String(v.renders);
    if (v.readout) { if (v.error) v.readout.textContent = ''; else showReadout(); }
    v.cost += performance.now() - t0;
    return v.cost;
  };

  v.render = (ctx) => { v.compute(ctx); return v.paint(); };

  if (v.canvas) wireCursor(v, draw, showReadout);
  wireExports(v, host);
  return v;
}

// A mouse hovering, a finger or pen touching (a tap, or a drag: sideways at once, or the page
// scrolls instead, as the canvas's touch-action says) and the keyboard move the cursor of a view's
// plot; focusing the plot puts the cursor on it.
function wireCursor(v, draw, showReadout) {
  const { def } = v;
  const at = (e) => {
    if (!v.layout || !v.data) return;
    const r = v.canvas.getBoundingClientRect();
    const c = v.layout.hit(e.clientX - r.left, e.clientY - r.top);
    if (c) { v.cursor = c; draw(); showReadout(); }
  };
  let touching = null;  // the finger or pen on the canvas, if any
  v.canvas.addEventListener('pointerdown', (e) => {
    if (e.pointerType !== 'mouse') touching = e.pointerId;
    at(e);
  });
  v.canvas.addEventListener('pointermove', (e) => {
    if (e.pointerType === 'mouse' || e.pointerId === touching) at(e);
  });
  for (const type of ['pointerup', 'pointercancel', 'pointerleave']) {
    v.canvas.addEventListener(type, (e) => { if (e.pointerId === touching) touching = null; });
  }
  window.matchMedia(COARSE).addEventListener('change', () => {
    if (!v.cursor && v.readout) v.readout.textContent = readoutHint();
  });
  v.canvas.addEventListener('keydown', (e) => {
    if (!v.data || !KEYS.has(e.key)) return;
    e.preventDefault();
    v.cursor = (def.move ?? defaultMove)(v.data, v.cursor ?? def.cursor0(v.data), e.key, v.layout);
    draw();
    showReadout();
  });
  v.canvas.addEventListener('focus', () => {
    if (v.data && !v.cursor) { v.cursor = def.cursor0(v.data); draw(); showReadout(); }
  });
}

// The plot at `scale`, with the caption in a band under it, as a PNG download.
function exportPng(v, caption, scale) {
  const { def } = v;
  const width = v.canvas.clientWidth, height = v.canvas.clientHeight, band = 24;
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(width * scale);
  canvas.height = Math.round((height + band) * scale);
  const ctx = canvas.getContext('2d');
  ctx.scale(scale, scale);
  const colors = themeColors(v.canvas);
  drawInto(ctx, width, height, def.plot(v.data, null, width, { exporting: true }), colors);
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, height, width, band);
  ctx.fillStyle = colors.fg;
  ctx.font = '11px "DejaVu Sans", sans-serif';
  ctx.textBaseline = 'middle';
  ctx.fillText(caption, 6, height + band / 2, width - 12);
  canvas.toBlob((blob) => download(`posenc-${def.id}@${scale}x.png`, blob), 'image/png');
}

// The PNG and CSV buttons and the data table, each captioned with the settings.
function wireExports(v, host) {
  const { def, section } = v;
  section.querySelector('.actions').addEventListener('click', (e) => {
    const kind = e.target.dataset?.export;
    if (!kind || !v.data) return;
    const caption = `posenc · ${def.caption(host.state(), host)}`;
    if (kind === 'csv') download(`posenc-${def.id}.csv`, new Blob([`# ${caption}\n${def.csv(v.data)}`], { type: 'text/csv' }));
    else exportPng(v, caption, kind === 'png2' ? 2 : 1);
  });
  section.querySelector('details.table')?.addEventListener('toggle', (e) => {
    if (e.target.open && v.data) e.target.querySelector('.table-body').innerHTML = csvTable(def.csv(v.data));
  });
}
