// T5's relative position buckets (chapter "bias").
import { SERIES } from '../plot/colormap.js';
import { linesCsv } from '../plot/lines.js';
import { t5Rule } from './shared/schemes.js';

export default {
  id: 't5-buckets',
  controls: [
    ['t5Buckets', { label: 'buckets', slider: { min: 4, max: 1024, log: true } }],
    ['t5MaxDist', { label: 'max distance', slider: { min: 8, max: 100000, log: true } }],
    ['t5Bidir', { kind: 'checkbox', label: 'bidirectional (for the other chapters)' }],
  ],
  compute({ pe, st }) {
    const rule = t5Rule(st);  // both kinds are drawn: the unidirectional one's rule is the stricter
    if (rule) throw new Error(rule);
    const reach = Math.min(2 * st.t5MaxDist, 4096);
    const xs = Float64Array.from({ length: 2 * reach + 1 }, (_, i) => i - reach);
    const bi = pe.t5Bucket(xs, { bidirectional: true, numBuckets: st.t5Buckets, maxDistance: st.t5MaxDist });
    const uni = pe.t5Bucket(xs, { bidirectional: false, numBuckets: st.t5Buckets, maxDistance: st.t5MaxDist });
    const series = [
      // The kind the other chapters use (the checkbox) is drawn bold.
      { label: `bidirectional (encoder)${st.t5Bidir ? ', used elsewhere' : ''}`, x: xs, y: Float64Array.from(bi),
        color: SERIES[0], step: true, width: st.t5Bidir ? 2.6 : 1.2 },
      { label: `unidirectional (decoder)${st.t5Bidir ? '' : ', used elsewhere'}`, x: xs, y: Float64Array.from(uni),
        color: SERIES[1], step: true, dash: [5, 3], width: st.t5Bidir ? 1.2 : 2.6 },
    ];
    return { xs, series, capped: 2 * st.t5MaxDist > reach, maxDist: st.t5MaxDist, reach, buckets: st.t5Buckets };
  },
  plot(d, cursor) {
    const edges = d.maxDist <= d.reach
      ? [{ x: -d.maxDist, label: `−${d.maxDist}` }, { x: d.maxDist, label: `+${d.maxDist}` }] : [];
    // Room above the last bucket for the dotted lines' labels, clear of the lines at the top bucket.
    const top = d.buckets - 1;
    return { kind: 'lines', spec: { series: d.series, xLabel: 'relative position = key − query', yLabel: 'bucket',
      yDomain: [0, top + Math.max(2, top * 0.12)], vlines: [{ x: 0, label: 'query' }, ...edges], cursor } };
  },
  note: (d) => (d.capped ? 'Relative positions from −4096 to 4096 shown.' : ''),
  readout: (d, c) => `key − query = ${d.xs[c.i]}: bucket ${d.series[0].y[c.i]} (bidirectional), `
    + `${d.series[1].y[c.i]} (unidirectional)`,
  csv: (d) => linesCsv('relative_position', d.xs, d.series),
  caption: (st) => `t5 num_buckets=${st.t5Buckets} max_distance=${st.t5MaxDist}`,
  cursor0: (d) => ({ i: Math.floor(d.xs.length / 2) }),
};
