// What the lab's KERPLE and FIRE models learned, beside ALiBi's fixed lines (chapter "bias"): the bias
// each head adds against the distance back i − j — ALiBi −m·d (the lab's slopes, max bias 8), KERPLE
// −r1·log(1 + r2·d) and −r1·d^r2 from the trained r1, r2, and FIRE's sampled f per layer at the last
// query of a training row (its 65 samples at x = k/64, placed at the distance where ψ(d)/ψ(max(L, i))
// = x). Captions measure near and far steps.
import { SERIES } from '../plot/colormap.js';
import { drawnFrom, requireTrained, resultTag } from '../lab/lab-position.js';
import { moveLinePanelGrid } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { panelsHeight } from '../plot/panels.js';

const PANEL = 280, MIN_WIDTH = 380, FLOOR = -30;  // the KERPLE panel's y axis stops at e^−30 ≈ 1e−13
const KERNELS = { kerple_log: (r1, r2, d) => -r1 * Math.log1p(r2 * d), kerple_power: (r1, r2, d) => -r1 * d ** r2 };
const NAMES = { alibi: 'ALiBi', kerple_log: 'KERPLE log', kerple_power: 'KERPLE power' };
const span = (vs, digits = 3) => {
  const lo = Math.min(...vs), hi = Math.max(...vs);
  return lo === hi ? fmt(lo, digits) : `${fmt(lo, digits)} … ${fmt(hi, digits)}`;
};

// ALiBi and both KERPLE kernels at distances 1 … 8 T_train − 1 (the lab's longest row); one series per head.
function kernels(pe, lab, T) {
  const log = requireTrained(lab, 'kerple_log'), power = requireTrained(lab, 'kerple_power');
  const H = log.config.nHeads, far = 8 * T - 1;
  const xs = Float64Array.from({ length: far }, (_, k) => k + 1);
  const groups = [{ scheme: 'alibi', fns: Array.from(pe.alibiSlopes(H, { maxBias: 8 }), (m) => (d) => -m * d), dash: [5, 3] }];
  for (const [scheme, t] of [['kerple_log', log], ['kerple_power', power]]) {
    const { r1, r2 } = t.position;
    groups.push({ scheme, fns: Array.from(r1.values, (a, h) => (d) => KERNELS[scheme](a, r2.values[h], d)) });
  }
  const series = groups.flatMap((g) => g.fns.map((f, h) => ({ label: h === 0 ? `${NAMES[g.scheme]} (heads 0–${g.fns.length - 1})` : '',
    x: xs, y: xs.map(f), color: lab.color(g.scheme), dash: g.dash, width: 1.4, group: g.scheme, head: h })));
  return { xs, far, H, groups, series, log, power };
}

// FIRE's layer l: the samples that fall on a row ending at query i (distance ≤ i), placed at their distance.
function fireLayer(t, l, i) {
  const p = t.position, c = p[`blocks.${l}.fire.c`].values[0], L = p[`blocks.${l}.fire.L`].values[0];
  const { shape: [n, H], values } = p[`blocks.${l}.fire.f`];
  const at = (k, q) => Math.expm1((k / (n - 1)) * Math.log1p(c * Math.max(L, q))) / c;  // ψ⁻¹(x·ψ(max(L, q)))
  const ks = [...Array(n).keys()].filter((k) => at(k, i) <= i + 1e-9);
  const xs = Float64Array.from(ks, (k) => at(k, i));
  const series = Array.from({ length: H }, (_, h) => ({ label: `head ${h}`, x: xs, color: SERIES[h % SERIES.length],
    y: Float64Array.from(ks, (k) => values[k * H + h]), points: true }));
  return { l, c, L, n, ks, xs, series, at };
}

// The KERPLE plot in one sentence: what one more step back costs near the query and far from it.
function kerpleCaption(k) {
  const steps = (g, d) => g.fns.map((f) => f(d - 1) - f(d));
  const [alibi, log, power] = k.groups, near = (g) => steps(g, 1), far = (g) => steps(g, k.far);
  const compare = (vs) => (Math.min(...vs) > Math.max(...near(alibi)) ? 'steeper than every ALiBi head'
    : Math.max(...vs) < Math.min(...near(alibi)) ? 'flatter than every ALiBi head' : 'among the ALiBi heads');
  const trend = (g) => (Math.max(...far(g)) < Math.min(...near(g)) ? 'flattens' : 'steepens');
  const flatter = far(alibi).filter((a) => a > Math.max(...far(log))).length;
  return `One step back from the query (distance 0 → 1) costs ${span(near(log))} with KERPLE log (${compare(near(log))}) and `
    + `${span(near(power))} with KERPLE power (${compare(near(power))}), against ALiBi's fixed ${span(near(alibi), 4)}; far away `
    + `the log kernel ${trend(log)} — a step at distance ${k.far} costs ${span(far(log), 4)}`
    + `${flatter ? `, less than ${flatter} of ALiBi's ${k.H} slopes` : ''} — and the power kernel (r2 ${span(Array.from(k.power.position.r2.values))}) ${trend(power)}, to `
    + `${span(far(power), 0)} per step.`;
}

// The FIRE plots in one sentence: where every head's bias falls below −1, at the last training query and at 4 T_train.
function fireCaption(layers, T) {
  const parts = layers.map((y) => {
    const j = y.ks.findIndex((_, jj) => y.series.every((s) => s.y[jj] <= -1));
    const lowest = Math.min(...y.series.flatMap((s) => Array.from(s.y)));
    const window = j < 0 ? 'no head-wide fall below −1'
      : `every head below −1 from distance ${fmt(y.xs[j], 2)} on (${fmt(y.at(y.ks[j], 4 * T - 1), 2)} for a query at `
        + `${4 * T - 1})`;
    return `layer ${y.l} has ${window}, down to ${fmt(lowest, 2)} (c ${fmt(y.c, 3)}, L ${fmt(y.L, 1)})`;
  });
  return `FIRE at query ${T - 1}: ${parts.join('; ')} — its distance is measured against ψ(max(L, i)), so a later query `
    + 'spreads the same bias over more keys.';
}

export default {
  id: 'learned-bias',
  setup(section, host) {
    host.lab.onChange((what) => { if (what === 'result') host.refresh('learned-bias'); });
  },
  height: (width) => panelsHeight(3, width, PANEL, MIN_WIDTH),
  compute({ pe, lab }) {
    const fire = requireTrained(lab, 'fire');
    const T = fire.config.trainLength;
    const k = kernels(pe, lab, T);
    const layers = Array.from({ length: fire.config.nLayers }, (_, l) => fireLayer(fire, l, T - 1));
    return { k, f: { fire, layers }, T, panels: [k.xs.length, ...layers.map((y) => y.xs.length)], kerple: kerpleCaption(k),
      fireText: fireCaption(layers, T) };
  },
  plot: (d, cursor) => ({ kind: 'panels', spec: { minWidth: MIN_WIDTH, cursor, panels: [
    { title: `ALiBi (fixed) and KERPLE (trained), y cut at ${FLOOR}`, kind: 'lines', spec: { series: d.k.series, xLog: true,
      xLabel: 'distance back i − j (log scale; every bias is 0 at 0)', yLabel: 'bias', yDomain: [FLOOR, 0],
      vlines: [{ x: d.T, label: `T_train ${d.T}` }] } },
    ...d.f.layers.map((y) => ({ title: `FIRE layer ${y.l} (trained), query ${d.T - 1}: ${y.ks.length} of ${y.n} samples`,
      kind: 'lines', spec: { series: y.series, xLabel: `distance back from query ${d.T - 1}`, yLabel: 'bias f' } })),
  ] } }),
  // ArrowUp and ArrowDown go to the plot drawn above or below, the other keys move along one and on to the next.
  move: (d, c, key, layout) => moveLinePanelGrid(c, d.panels, key, layout),
  readout(d, c) {
    if (c.panel === 0) {
      const dist = d.k.xs[c.i];
      const groups = d.k.groups.map((g) => `${NAMES[g.scheme]} ${d.k.series.filter((s) => s.group === g.scheme)
        .map((s) => fmt(s.y[c.i], 5)).join(' / ')}`);
      return `distance ${dist}, bias by head (0, 1, …): ${groups.join('; ')}`;
    }
    const y = d.f.layers[c.panel - 1], k = y.ks[c.i];
    return `FIRE layer ${y.l}, sample ${k} (x = ${k}/${y.n - 1}) at distance ${fmt(y.xs[c.i], 4)} back from query ${d.T - 1}: `
      + y.series.map((s) => `${s.label} ${fmt(s.y[c.i], 5)}`).join(', ');
  },
  note(d) {  // one "Drawn from" per result used (the result on show may lack some of the three schemes)
    const used = new Map();
    for (const [scheme, t] of [['kerple_log', d.k.log], ['kerple_power', d.k.power], ['fire', d.f.fire]]) {
      used.set(t.result, { t, schemes: [...(used.get(t.result)?.schemes ?? []), scheme] });
    }
    return [...used.values()].map(({ t, schemes }) => drawnFrom(t, schemes.join(', '))).join(' ');
  },
  html: (d) => (d ? `<p data-caption="kerple">${d.kerple}</p><p data-caption="fire">${d.fireText}</p>` : ''),
  csv(d) {  // KERPLE and ALiBi rows have no layer or sample; FIRE's distance is at query T_train − 1
    const out = ['scheme,layer,head,sample,distance,bias'];
    for (const s of d.k.series) s.y.forEach((v, i) => out.push([s.group, '', s.head, '', s.x[i], v].join(',')));
    for (const y of d.f.layers) {
      for (const [h, s] of y.series.entries()) s.y.forEach((v, i) => out.push(['fire', y.l, h, y.ks[i], s.x[i], v].join(',')));
    }
    return `${out.join('\n')}\n`;
  },
  caption: (st, { lab }) => `learned biases · ${resultTag(requireTrained(lab, 'fire'))}`,
  cursor0: () => ({ panel: 0, i: 0 }),
};
