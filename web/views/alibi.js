// ALiBi: one slope per head and the bias it adds at each distance (chapter "bias").
import { SEQUENTIAL } from '../colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { fmt, headsBySlope } from './common.js';

export default {
  id: 'alibi',
  title: 'ALiBi: a straight-line penalty per head',
  explain: 'ALiBi subtracts slope × distance from each score: far-away keys get less attention, without any position vector. One slope per head, a geometric series: head k of n gets 2<sup>−max_bias·(k+1)/n</sup> (max bias 8 in BLOOM and MPT); when n is not a power of two, the heads past the largest power of two below it take slopes in between, from the series of twice as many heads. Rows: heads sorted by slope; columns: how far back the key is. Colour: e<sup>bias</sup>, the factor by which the bias scales a key\'s attention weight before normalising — steep heads (bottom) fade to nothing within a few positions, shallow ones (top) still see far back.',
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
    return { xs: Float64Array.from({ length: n }, (_, i) => i), nx: n, ny: st.heads, values, shown, slopes, order, capped: st.seqLen > n };
  },
  plot: (d, cursor) => ({ kind: 'heatmap', spec: { values: d.shown, nx: d.nx, ny: d.ny, lo: 0, hi: 1, lut: SEQUENTIAL, xLabel: 'distance back from the query (positions)', yLabel: 'slope rank (0 = steepest)', legendLabel: 'e^bias', cursor } }),
  note: (d) => `Slopes, steepest first: ${d.order.slice(0, 12).map((h) => `head ${h} ${fmt(d.slopes[h], 4)}`).join(', ')}${d.order.length > 12 ? ', and so on' : ''}.${d.order.some((h, y) => h !== y) ? ' The heads are not in slope order here, so the rows are sorted by slope; the read-out names each row\'s head.' : ''}${d.capped ? ' Distances up to 511 shown.' : ''}`,
  readout: (d, c) => `head ${d.order[c.y]} (slope ${fmt(d.slopes[d.order[c.y]], 6)} = 2^${fmt(Math.log2(d.slopes[d.order[c.y]]), 2)}), distance ${c.x}: bias ${fmt(d.values[c.x * d.ny + c.y], 5)}, e^bias ${fmt(d.shown[c.x * d.ny + c.y], 5)}`,
  csv: (d) => heatmapCsv({ ...d, ys: d.order }, 'distance', 'head', 'bias'),  // rows are ranks; the CSV names the head
  caption: (st) => `alibi heads=${st.heads} max_bias=${st.maxBias}`,
  cursor0: (d) => ({ x: Math.min(1, d.nx - 1), y: 0 }),
};
