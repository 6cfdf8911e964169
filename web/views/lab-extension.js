// Context extension by fine-tuning (chapter "lab"): the shipped `npm run lab -- --extend 4` result
// (data/lab-extension.json, docs/lab.md "Context extension"): for RoPE and xPos, the loss at
// L = 4 T_train and at 2 L against the fine-tuning steps at L, one line per scaling (the mean over the
// seeds, thin lines at the lowest and highest seed), the floor at each length.
import { SERIES } from '../plot/colormap.js';
import { LabLoading } from '../lab/lab.js';
import { fmt } from './shared/numbers.js';
import { panelsHeight } from '../plot/panels.js';
import { moveLinePanelGrid } from '../plot/cursor.js';

const EXTENSION_URL = new URL('../../data/lab-extension.json', import.meta.url);
const SCALINGS = ['none', 'linear', 'ntk', 'yarn'];
const LABEL = { none: 'none', linear: 'linear (PI)', ntk: 'NTK', yarn: 'YaRN' };
const COLOR = { none: SERIES[7], linear: SERIES[1], ntk: SERIES[2], yarn: SERIES[3] };
const DASH = { none: [], linear: [7, 4], ntk: [2, 3], yarn: [4, 2] };
const PANEL = 260, MIN_WIDTH = 460;

// Per scheme and length: for each scaling the mean, min and max over the seeds at each checkpoint.
function panelsOf(r) {
  const { checkpoints, length: L } = r.extend;
  const out = [];
  for (const scheme of [...new Set(r.results.map((x) => x.scheme))]) {
    const runs = r.results.filter((x) => x.scheme === scheme);
    for (const length of [L, 2 * L]) {
      const lines = SCALINGS.map((scaling) => {
        const at = checkpoints.map((n) => runs.map((x) => x.rows.find((w) => w.ropeScaling === scaling && w.steps === n
          && w.length === length).loss));
        return { scaling, mean: at.map((v) => v.reduce((a, b) => a + b, 0) / v.length),
          lo: at.map((v) => Math.min(...v)), hi: at.map((v) => Math.max(...v)) };
      });
      out.push({ scheme, length, lines, seeds: runs.length });
    }
  }
  return out;
}

const best = (p, i) => p.lines.reduce((a, b) => (b.mean[i] < a.mean[i] ? b : a));

// The shipped result, fetched the first time the view is drawn (it sits in a fold: most readers never
// open it), then kept in extras; `loaded` asks for the view to be drawn again.
let fetching = null;
function fetchExtension(extras, loaded) {
  fetching ??= fetch(EXTENSION_URL)
    .then((response) => { if (!response.ok) throw new Error(`HTTP ${response.status}`); return response.json(); })
    .then((r) => { extras.labExtension = r; })
    .catch((e) => { extras.labExtension = { error: `data/lab-extension.json did not load: ${e.message}` }; })
    .finally(loaded);
}

export default {
  id: 'lab-extension',
  height: (width) => panelsHeight(4, width, PANEL, MIN_WIDTH),
  compute({ extras, redraw }) {
    const r = extras.labExtension;
    if (!r) {
      fetchExtension(extras, () => redraw('lab-extension'));
      throw new LabLoading('Loading the shipped extension result…');
    }
    if (r.error) throw new Error(r.error);
    return { r, N: r.extend.checkpoints, panels: panelsOf(r), floor: r.floor ?? {} };
  },
  plot: (d, cursor) => ({
    kind: 'panels',
    spec: {
      minWidth: MIN_WIDTH, cursor,
      panels: d.panels.map((p) => ({
        title: `${p.scheme} at ${p.length} (${p.length === d.r.extend.length ? 'L, fine-tuned' : '2L, past it'})`,
        kind: 'lines',
        spec: {
          series: p.lines.flatMap((l) => [
            { label: LABEL[l.scaling], x: d.N, y: l.mean, color: COLOR[l.scaling], dash: DASH[l.scaling], points: true },
            ...(p.seeds > 1 ? [l.lo, l.hi].map((y) => ({ label: '', x: d.N, y, color: COLOR[l.scaling], width: 0.6 })) : []),
          ]),
          xTicks: d.N, xDomain: [0, d.N[d.N.length - 1]], xLabel: 'fine-tuning steps at L', yLabel: 'mean loss (nats/token)',
          // The floor's label under its line: the last checkpoint's points come down close above it.
          hlines: Number.isFinite(d.floor[p.length])
            ? [{ y: d.floor[p.length], label: `floor ${d.floor[p.length].toFixed(3)}`, below: true }] : [],
        },
      })),
    },
  }),
  // ArrowUp and ArrowDown go to the panel drawn above or below, the other keys move along one and on to the next.
  move: (d, c, key, layout) => moveLinePanelGrid(c, d.panels.map(() => d.N.length), key, layout),
  cursor0: () => ({ panel: 0, i: 0 }),
  readout(d, c) {
    const p = d.panels[c.panel];
    const parts = p.lines.map((l) => `${LABEL[l.scaling]} ${fmt(l.mean[c.i], 4)}`
      + (p.seeds > 1 ? ` (${fmt(l.lo[c.i], 4)}–${fmt(l.hi[c.i], 4)})` : ''));
    return `${p.scheme} at length ${p.length} after ${d.N[c.i]} fine-tuning steps, mean of ${p.seeds} seeds: ${parts.join(', ')}`;
  },
  note(d) {
    const last = d.N.length - 1;
    // One shipped run: it does not follow the task chosen in the lab's controls.
    const run = `The ${d.r.task} task's shipped run (${d.r.command}), whatever task the lab has chosen.`;
    return [run, ...d.panels.map((p) => {
      const a = best(p, 0), b = best(p, last);
      return `${p.scheme} at ${p.length}: lowest mean with ${LABEL[a.scaling]} before fine-tuning (${a.mean[0].toFixed(3)}), `
        + `with ${LABEL[b.scaling]} after ${d.N[last]} steps (${b.mean[last].toFixed(3)}).`;
    })].join(' ');
  },
  csv(d) {
    const out = ['scheme,length,rope_scaling,steps,seed,loss'];
    for (const x of d.r.results) for (const w of x.rows) out.push(`${x.scheme},${w.length},${w.ropeScaling},${w.steps},${x.seed},${w.loss}`);
    return `${out.join('\n')}\n`;
  },
  caption: (st, host) => `posenc lab extension: ${host.extras.labExtension?.command ?? 'npm run lab -- --extend 4'}`,
};
