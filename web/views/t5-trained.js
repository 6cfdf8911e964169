// What the lab's T5 model learned (chapter "bias"): its trained t5_bias [buckets][heads] read through
// the lab's causal buckets, one step line per head against the distance back i − j, out to 2 T_train.
import { SERIES } from '../plot/colormap.js';
import { LAB_T5, drawnFrom, requireTrained, resultTag } from '../lab/lab-position.js';
import { fmt } from './shared/numbers.js';
import { linesCsv } from '../plot/lines.js';

const range = (vs) => {
  const lo = Math.min(...vs), hi = Math.max(...vs);
  return lo === hi ? fmt(lo, 2) : `${fmt(lo, 2)} … ${fmt(hi, 2)}`;
};

function setup(section, host) {
  host.lab.onChange((what) => { if (what === 'result') host.refresh('t5-trained'); });
}

export default {
  id: 't5-trained',
  setup,
  compute({ pe, lab }) {
    const t = requireTrained(lab, 't5');
    const { shape: [nBuckets, H], values } = t.position.t5_bias;
    const T = t.config.trainLength;
    const xs = Float64Array.from({ length: 2 * T }, (_, d) => d);
    const buckets = pe.t5Bucket(xs.map((d) => -d), LAB_T5);  // relative position j − i of a key d back
    const series = Array.from({ length: H }, (_, h) => ({ label: `head ${h}`, x: xs, color: SERIES[h % SERIES.length],
      step: true, y: Float64Array.from(buckets, (b) => values[b * H + h]) }));
    // Training saw distances 0 … T − 1 only: the buckets past bucket(T − 1) never had a gradient.
    const lastTrained = buckets[T - 1], firstUnseen = buckets.findIndex((b) => b > lastTrained);
    return { t, xs, buckets, series, H, T, nBuckets, lastTrained, firstUnseen, values };
  },
  plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, cursor, xLabel: 'distance back from the query, i − j',
    yLabel: 'trained bias (added to the score)',
    vlines: [{ x: d.T, label: `T_train ${d.T}` }],
    texts: d.firstUnseen > 0 ? [{ x: d.firstUnseen, y: null, label: `from ${d.firstUnseen}: buckets never trained` }] : [],
    hlines: [{ y: 0, label: 'initial value 0', side: 'left' }] } }),
  note(d) {
    const at = (dist) => d.series.map((s) => s.y[dist]);
    const unseen = [];
    for (let b = d.lastTrained + 1; b < d.nBuckets; b++) for (let h = 0; h < d.H; h++) unseen.push(d.values[b * d.H + h]);
    const near = `Across the ${d.H} heads the model learned ${range(at(0))} at distance 0, ${range(at(1))} at 1 and `
      + `${range(at(2))} at 2; at distance ${d.T - 1}, the farthest it trained on (bucket ${d.lastTrained}), ${range(at(d.T - 1))}.`;
    const far = d.firstUnseen > 0
      ? ` Buckets ${d.lastTrained + 1} … ${d.nBuckets - 1} (distance ${d.firstUnseen} and on) hold no distance below T_train `
        + `${d.T}, so training never moved them: they are ${range(unseen)}`
        + (Math.min(...unseen) > Math.max(...at(d.T - 1))
          ? `, above every head's bias at distance ${d.T - 1}: past T_train the far keys weigh more than the farthest trained ones.`
          : '.') : '';
    return `${near}${far} ${drawnFrom(d.t, 't5')}`;
  },
  readout(d, c) {
    const dist = d.xs[c.i], b = d.buckets[c.i];
    const heads = d.series.map((s) => `${s.label} ${fmt(s.y[c.i], 4)}`).join(', ');
    return `distance ${dist} (bucket ${b}${b > d.lastTrained ? ', never trained' : ''}): ${heads}`;
  },
  csv: (d) => linesCsv('distance', d.xs, [{ label: 'bucket', y: d.buckets }, ...d.series]),
  caption: (st, { lab }) => `t5 trained bias · ${resultTag(requireTrained(lab, 't5'))}`,
  cursor0: () => ({ i: 1 }),
};
