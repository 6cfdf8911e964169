// ALiBi: one slope per head and the bias it adds at each distance (chapter "bias").
import { SEQUENTIAL } from '../colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { fmt } from './common.js';

export default {
  id: 'alibi',
  title: 'ALiBi: a straight-line penalty per head',
  explain: 'ALiBi subtracts slope × distance from each score: far-away keys get less attention, without any position vector. One slope per head, a geometric series (2<sup>−8/n</sup>, 2<sup>−16/n</sup>, … for n heads; BLOOM, MPT). Rows: heads; columns: how far back the key is. Colour: e<sup>bias</sup>, the factor by which the bias scales a key\'s attention weight before normalising — steep heads (bottom) fade to nothing within a few positions, shallow ones (top) still see far back.',
  controls: [['maxBias', { label: 'max bias', slider: { min: 0.5, max: 64, log: true } }]],
  compute({ pe, st }) {
    const n = Math.min(st.seqLen, 512);
    const bias = pe.alibiBias(st.heads, 1, n, { causal: true, maxBias: st.maxBias });
    const slopes = pe.alibiSlopes(st.heads, { maxBias: st.maxBias });
    // x = distance back from the query (0 … n-1), y = head; colour: e^bias, the weight multiplier.
    const values = new Float32Array(n * st.heads), shown = new Float32Array(n * st.heads);
    for (let h = 0; h < st.heads; h++) {
      for (let dx = 0; dx < n; dx++) {
        const b = bias[h * n + (n - 1 - dx)];
        values[dx * st.heads + h] = b;
        shown[dx * st.heads + h] = Math.exp(b);
      }
    }
    return { xs: Float64Array.from({ length: n }, (_, i) => i), nx: n, ny: st.heads, values, shown, slopes, capped: st.seqLen > n };
  },
  plot: (d, cursor) => ({ kind: 'heatmap', spec: { values: d.shown, nx: d.nx, ny: d.ny, lo: 0, hi: 1, lut: SEQUENTIAL, xLabel: 'distance back from the query (positions)', yLabel: 'head (0 = steepest)', legendLabel: 'e^bias', cursor } }),
  note: (d) => `Slopes: ${Array.from(d.slopes.slice(0, 8), (s) => fmt(s, 4)).join(', ')}${d.slopes.length > 8 ? ', …' : ''}.${d.capped ? ' Distances up to 511 shown.' : ''}`,
  readout: (d, c) => `head ${c.y} (slope ${fmt(d.slopes[c.y], 6)} = 2^${fmt(Math.log2(d.slopes[c.y]), 2)}), distance ${c.x}: bias ${fmt(d.values[c.x * d.ny + c.y], 5)}, e^bias ${fmt(d.shown[c.x * d.ny + c.y], 5)}`,
  csv: (d) => heatmapCsv(d, 'distance', 'head', 'bias'),
  caption: (st) => `alibi heads=${st.heads} max_bias=${st.maxBias}`,
  cursor0: (d) => ({ x: Math.min(1, d.nx - 1), y: 0 }),
};
