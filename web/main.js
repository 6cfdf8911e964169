// The explorer: every number comes from the posenc package (WASM); this file only wires
// controls to calls and calls to plots.
import { init } from '../dist/browser.js';
import { DIVERGING } from './colormap.js';
import { cellAt, drawHeatmap } from './plot.js';

const $ = (id) => document.getElementById(id);

function showError(message) {
  const banner = $('error');
  banner.textContent = message;
  banner.hidden = false;
}

function setStatus(pe, what, ms) {
  $('status').textContent = `SIMD: ${pe.simdArch} · ${what} computed in ${ms.toFixed(2)} ms`;
}

function heatmapView(pe) {
  const form = $('pe-heatmap-controls');
  const canvas = $('pe-heatmap-canvas');
  const readout = $('pe-heatmap-readout');
  let state = null;  // { values, seqLen, dModel, base, plot }

  function render() {
    if (!form.checkValidity()) return;
    const seqLen = form.seqLen.valueAsNumber;
    const dModel = form.dModel.valueAsNumber;
    const base = form.base.valueAsNumber;
    const t0 = performance.now();
    let values;
    try {
      values = pe.sinusoidal(seqLen, dModel, { base });
    } catch (e) {
      readout.textContent = e.message;
      return;
    }
    setStatus(pe, `sinusoidal ${seqLen}×${dModel}`, performance.now() - t0);
    const plot = drawHeatmap(canvas, {
      values, nx: seqLen, ny: dModel, lo: -1, hi: 1, lut: DIVERGING,
      xLabel: 'position pos', yLabel: 'dimension (0 = fastest)', legendLabel: 'PE value',
    });
    state = { values, seqLen, dModel, base, plot };
    canvas.dataset.drawn = String(Number(canvas.dataset.drawn ?? 0) + 1);
  }

  canvas.addEventListener('mousemove', (event) => {
    if (!state) return;
    const cell = cellAt(event, canvas, state.plot, state.seqLen, state.dModel);
    if (!cell) return;
    const { x: pos, y: dim } = cell;
    const i = Math.floor(dim / 2);
    const wavelength = 2 * Math.PI * state.base ** ((2 * i) / state.dModel);
    const fn = dim % 2 === 0 ? 'sin' : 'cos';
    const v = state.values[pos * state.dModel + dim];
    readout.textContent =
      `pos ${pos}, dim ${dim} = ${fn}(pos / ${state.base}^(${2 * i}/${state.dModel})), ` +
      `wavelength ${wavelength.toPrecision(4)} positions: ${v.toFixed(6)}`;
  });
  form.addEventListener('input', render);
  form.addEventListener('submit', (e) => e.preventDefault());
  new ResizeObserver(render).observe(canvas);
  render();
}

try {
  const pe = await init();
  heatmapView(pe);
  document.body.dataset.ready = 'true';
} catch (e) {
  showError(`The posenc WebAssembly module failed to load: ${e.message}`);
  $('status').textContent = 'WebAssembly module not loaded.';
  document.body.dataset.ready = 'error';
}
