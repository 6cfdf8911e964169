// ALiBi: one slope per head and the bias it adds at each distance (chapter "bias"; the lesson's
// |i − j| against the distance back of causal models is in the errata, web/page/errata.js).
import { SEQUENTIAL } from '../plot/colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { headsBySlope } from './shared/heads.js';
import { fmt } from './shared/numbers.js';

// The slopes' rule (Press et al. 2022's code, as the package computes it): 2^(−b(k+1)/n) for head
// k of n heads, max bias b; when n is not a power of 2, the power of 2 below it, c, gives heads
// 0 … c − 1 their slopes, and the rest take those halfway (in the exponent) between 1 and head
// 0's, head 0's and head 1's, and so on.
function rule(n, b) {
  const c = 2 ** Math.floor(Math.log2(n));
  if (c === n) return ` Head k: 2^(−${b}(k+1)/${n}).`;
  const rest = n - 1 > c ? `heads ${c} … ${n - 1} the slopes` : `head ${c} the slope`;
  const between = n - 1 > c ? 'between 1 and head 0\'s, head 0\'s and head 1\'s, …' : 'between 1 and head 0\'s';
  return ` ${n} heads is not a power of 2: heads 0 … ${c - 1} take 2^(−${b}(k+1)/${c}) (${b}: the max bias), as ${c} heads would, and ${rest} `
    + `halfway ${between} (in the exponent), 2^(−${b}(2(k−${c})+1)/${2 * c}).`;
}

export default {
  id: 'alibi',
  controls: [['maxBias', { label: 'max bias', slider: { min: 0.5, max: 64, log: true } }]],
  compute({ pe, st }) {
    const n = Math.min(st.seqLen, 512);
    const bias = pe.alibiBias(st.heads, 1, n, { causal: true, maxBias: st.maxBias });
    const slopes = pe.alibiSlopes(st.heads, { maxBias: st.maxBias });
    const order = headsBySlope(slopes);  // the rows, bottom to top
    // x = distance back from the query (0 … n-1), y = rank by slope; colour: e^bias, the weight multiplier.
    const values = new Float32Array(n * st.heads), shown = new Float32Array(n * st.heads);
    order.forEach((h, y) => {
      for (let dx = 0; dx < n; dx++) {
        const b = bias[h * n + (n - 1 - dx)];
        values[dx * st.heads + y] = b;
        shown[dx * st.heads + y] = Math.exp(b);
      }
    });
    const xs = Float64Array.from({ length: n }, (_, i) => i);
    return { xs, nx: n, ny: st.heads, values, shown, slopes, order, capped: st.seqLen > n, maxBias: st.maxBias };
  },
  plot: (d, cursor) => ({ kind: 'heatmap', spec: { values: d.shown, nx: d.nx, ny: d.ny, lo: 0, hi: 1, lut: SEQUENTIAL,
    xLabel: 'distance back from the query (positions)', yLabel: 'slope rank (0 = steepest)', legendLabel: 'e^bias', cursor } }),
  note(d) {
    const slopes = d.order.slice(0, 12).map((h) => `head ${h} ${fmt(d.slopes[h], 4)}`).join(', ');
    const sorted = d.order.some((h, y) => h !== y)
      ? ' The heads are not in slope order here, so the rows are sorted by slope; the read-out names each row\'s head.' : '';
    const more = d.order.length > 12 ? ', and so on' : '';
    return `Slopes, steepest first: ${slopes}${more}.${sorted}${rule(d.ny, d.maxBias)}${d.capped ? ' Distances up to 511 shown.' : ''}`;
  },
  readout(d, c) {
    const head = d.order[c.y], slope = d.slopes[head], at = c.x * d.ny + c.y;
    return `head ${head} (slope ${fmt(slope, 6)} = 2^${fmt(Math.log2(slope), 2)}), distance ${c.x}: `
      + `bias ${fmt(d.values[at], 5)}, e^bias ${fmt(d.shown[at], 5)}`;
  },
  csv: (d) => heatmapCsv({ ...d, ys: d.order }, 'distance', 'head', 'bias'),  // rows are ranks; the CSV names the head
  caption: (st) => `alibi heads=${st.heads} max_bias=${st.maxBias}`,
  cursor0: (d) => ({ x: Math.min(1, d.nx - 1), y: 0 }),
};
