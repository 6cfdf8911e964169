// The explorer's views. Each view computes its numbers with the posenc package (never its own
// copy of the maths), describes a plot for plot.js, and knows how to read out a cursor position
// and write its data as CSV. A view: { id, title, explain, compute(ctx) → data,
// plot(data, cursor) → { kind: 'heatmap' | 'lines' | 'custom', spec }, readout(data, cursor),
// csv(data), caption(st), cursor0(data) }.
import { DIVERGING, SEQUENTIAL, SERIES } from './colormap.js';
import { dimsOf, schemesOf } from './state.js';

const TWO_PI = 2 * Math.PI;
const LOD_COLUMNS = 2048;  // at most this many positions are computed and drawn across

/** `count` evenly spread integers covering [0, last] (all of them when last < count). */
export function samplePositions(last, count = LOD_COLUMNS) {
  if (last + 1 <= count) return Float64Array.from({ length: last + 1 }, (_, i) => i);
  return Float64Array.from({ length: count }, (_, i) => Math.round((i * last) / (count - 1)));
}

/** The RoPE parameters the settings describe (scaling overridable, for the compare view). */
export function ropeParams(st, extras, scaling = st.scaling) {
  const s = { type: scaling };
  const factor = Math.max(1, st.lTarget / st.lTrain);
  if (scaling === 'linear' || scaling === 'ntk') s.factor = factor;
  if (scaling === 'dynamic') Object.assign(s, { factor, maxPositionEmbeddings: st.lTrain });
  if (scaling === 'yarn') Object.assign(s, { factor, originalMaxPositionEmbeddings: st.lTrain, betaFast: st.betaFast, betaSlow: st.betaSlow, truncate: st.truncate });
  if (scaling === 'llama3') Object.assign(s, { factor, originalMaxPositionEmbeddings: st.lTrain, lowFreqFactor: st.lowFreq, highFreqFactor: st.highFreq });
  if (scaling === 'longrope') {
    const f = extras.longFactors;
    if (!f) return { headDim: st.dModel, theta: st.base, partialRotaryFactor: st.partial };  // no factors: unscaled
    Object.assign(s, { factor, originalMaxPositionEmbeddings: st.lTrain, shortFactor: f.shortFactor, longFactor: f.longFactor });
  }
  return { headDim: st.dModel, theta: st.base, partialRotaryFactor: st.partial, scaling: s };
}

// Read-out numbers: `digits` decimals, or as many significant digits in exponent form.
function fmt(v, digits = 6) {
  if (v === -Infinity) return '−∞';
  if (!Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-4 && v !== 0) ? v.toExponential(digits) : v.toFixed(digits);
}

function csvLines(header, rows) {
  return `${header.join(',')}\n${rows.map((r) => r.join(',')).join('\n')}\n`;
}

// Heatmap CSV: one line per cell.
function heatmapCsv(d, xName, yName, vName) {
  const rows = [];
  for (let x = 0; x < d.nx; x++) for (let y = 0; y < d.ny; y++) rows.push([d.xs[x], d.ys ? d.ys[y] : y, d.values[x * d.ny + y]]);
  return csvLines([xName, yName, vName], rows);
}

// Line-chart CSV: x and one column per series.
function linesCsv(xName, xs, series) {
  return csvLines([xName, ...series.map((s) => s.label.replace(/,/g, ';'))], Array.from(xs, (x, i) => [x, ...series.map((s) => s.y[i])]));
}

// The sinusoidal table for (sampled) positions, shared by pe-heatmap, dim-traces and similarity
// (memo: computed once per redraw for the same positions).
function sinusoidalRows({ pe, st, memo }, positions) {
  const key = `sinusoidal ${st.dModel} ${st.base} ${st.sinLayout} ${positions.length} ${positions[positions.length - 1]}`;
  return memo(key, () => pe.sinusoidal(positions.length, st.dModel, { base: st.base, layout: st.sinLayout, positions }));
}

const heatmapCursor = (d) => ({ x: Math.min(1, d.nx - 1), y: 0 });
const linesCursor = () => ({ i: 0 });

export const VIEWS = [
  {
    id: 'pe-heatmap',
    title: 'Sinusoidal encoding: PE[pos][dim]',
    explain: 'Each column is one position\'s vector. Dimension pairs turn at geometric speeds: <code>sin</code> and <code>cos</code> of pos / base<sup>2i/d_model</sup>. Low dimensions turn fast, high ones slowly, so every position gets a distinct pattern.',
    compute(ctx) {
      const xs = samplePositions(ctx.st.seqLen - 1);
      return { xs, nx: xs.length, ny: ctx.st.dModel, values: sinusoidalRows(ctx, xs), lod: xs.length < ctx.st.seqLen };
    },
    plot: (d, cursor) => ({ kind: 'heatmap', spec: { values: d.values, nx: d.nx, ny: d.ny, xDomain: [d.xs[0], d.xs[d.nx - 1]], lo: -1, hi: 1, lut: DIVERGING, xLabel: `position pos${d.lod ? ` (every ${fmt(d.xs[1] - d.xs[0], 0)}th)` : ''}`, yLabel: 'dimension (0 = fastest)', legendLabel: 'PE value', cursor } }),
    readout(d, c, st) {
      const i = Math.floor(c.y / 2);
      const v = d.values[c.x * d.ny + c.y];
      if (st.sinLayout === 'interleaved') {
        const wavelength = TWO_PI * st.base ** ((2 * i) / st.dModel);
        return `pos ${d.xs[c.x]}, dim ${c.y} = ${c.y % 2 ? 'cos' : 'sin'}(pos / ${st.base}^(${2 * i}/${st.dModel})), wavelength ${fmt(wavelength, 4)} positions: ${fmt(v)}`;
      }
      return `pos ${d.xs[c.x]}, dim ${c.y} (${c.y < d.ny / 2 ? 'sin' : 'cos'} half, concat layout): ${fmt(v)}`;
    },
    csv: (d) => heatmapCsv(d, 'pos', 'dim', 'pe'),
    caption: (st) => `sinusoidal seq_len=${st.seqLen} d_model=${st.dModel} base=${st.base} layout=${st.sinLayout}`,
    cursor0: heatmapCursor,
  },
  {
    id: 'dim-traces',
    title: 'Chosen dimensions against position',
    explain: 'One line per chosen dimension of the sinusoidal table: the first dimensions oscillate every few positions, later ones over thousands. Choose dimensions in <em>traces</em>.',
    compute(ctx) {
      const { st } = ctx;
      const xs = samplePositions(st.seqLen - 1);
      const table = sinusoidalRows(ctx, xs);
      const dims = dimsOf(st);
      const series = dims.map((dim, k) => ({ label: `dim ${dim}`, x: xs, y: Float64Array.from(xs, (_, i) => table[i * st.dModel + dim]), color: SERIES[k % SERIES.length] }));
      return { xs, series };
    },
    plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, xLabel: 'position pos', yLabel: 'PE[pos][dim]', yDomain: [-1.05, 1.05], cursor } }),
    readout: (d, c) => `pos ${d.xs[c.i]}: ${d.series.map((s) => `${s.label} = ${fmt(s.y[c.i])}`).join(', ')}`,
    csv: (d) => linesCsv('pos', d.xs, d.series),
    caption: (st) => `sinusoidal dims=${st.dims} base=${st.base} d_model=${st.dModel}`,
    cursor0: linesCursor,
  },
  {
    id: 'spectrum',
    title: 'RoPE spectrum: wavelength per pair, before and after scaling',
    explain: 'Each rotary pair i turns by θ<sub>i</sub> per position, a wavelength of 2π/θ<sub>i</sub> positions. Scaling stretches the slow pairs whose wavelength exceeds the training length L<sub>train</sub> so that positions up to L<sub>target</sub> stay in range: linear stretches all, YaRN ramps between the two, llama3 uses wavelength bands, LongRoPE per-pair factors.',
    compute({ pe, st, extras }) {
      const base = pe.ropeFrequencies(ropeParams(st, extras, 'none'), { dtype: 'float64' });
      const scaled = pe.ropeFrequencies(ropeParams(st, extras), { seqLen: st.lTarget, dtype: 'float64' });
      const xs = Float64Array.from(base.invFreq, (_, i) => i);
      const before = Float64Array.from(base.invFreq, (f) => TWO_PI / f);
      const after = Float64Array.from(scaled.invFreq, (f) => TWO_PI / f);
      const ratio = Float64Array.from(after, (w, i) => w / before[i]);
      const series = [
        { label: 'wavelength, unscaled', x: xs, y: before, color: SERIES[0] },
        { label: `wavelength, ${st.scaling}`, x: xs, y: after, color: SERIES[1], dash: [6, 3] },
        { label: 'stretch (right axis)', x: xs, y: ratio, color: SERIES[2], axis: 2 },
      ];
      const hlines = [{ y: st.lTrain, label: `L_train = ${st.lTrain}` }, { y: st.lTarget, label: `L_target = ${st.lTarget}`, color: SERIES[3] }];
      if (st.scaling === 'llama3') {
        hlines.push({ y: st.lTrain / st.lowFreq, label: 'llama3 low-frequency band', color: SERIES[4] });
        hlines.push({ y: st.lTrain / st.highFreq, label: 'llama3 high-frequency band', color: SERIES[4] });
      }
      return { xs, series, hlines, attentionFactor: scaled.attentionFactor, noFactors: st.scaling === 'longrope' && !extras.longFactors };
    },
    plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, hlines: d.hlines, xLabel: 'rotary pair i', yLabel: 'wavelength 2π/θᵢ (positions, log)', y2Label: 'stretch', yLog: true, cursor } }),
    readout: (d, c) => `pair ${c.i}: wavelength ${fmt(d.series[0].y[c.i], 3)} → ${fmt(d.series[1].y[c.i], 3)} positions (×${fmt(d.series[2].y[c.i], 4)}); attention factor ${fmt(d.attentionFactor, 6)}${d.noFactors ? ' — LongRoPE needs per-pair factors: pick the Phi-3.5 preset or paste a config' : ''}`,
    csv: (d) => linesCsv('pair', d.xs, d.series),
    caption: (st) => `rope head_dim=${st.dModel} theta=${st.base} scaling=${st.scaling} L_train=${st.lTrain} L_target=${st.lTarget} partial=${st.partial}`,
    cursor0: linesCursor,
  },
  {
    id: 'clocks',
    title: 'Clocks: each pair\'s angle at one position',
    explain: 'One clock per rotary pair (a sample when there are many), the hand at the angle pos·θ<sub>i</sub>. A red rim marks an angle the model never saw in training: the pair turns less than once in L<sub>train</sub> positions, and this angle lies beyond what it reached. Scaling slows those pairs down so their angles stay familiar.',
    compute({ pe, st, extras }) {
      const params = ropeParams(st, extras);
      const base = pe.ropeFrequencies(ropeParams(st, extras, 'none'), { dtype: 'float64' }).invFreq;
      const scaled = pe.ropeFrequencies(params, { seqLen: Math.max(st.pos + 1, st.lTarget), dtype: 'float64' }).invFreq;
      const { cos, sin } = pe.ropeCache({ invFreq: scaled, positions: [st.pos], precision: st.precision });
      const n = cos.length, shown = Math.min(n, 64);
      const pairs = Array.from({ length: shown }, (_, k) => Math.round((k * (n - 1)) / Math.max(1, shown - 1)));
      const clocks = pairs.map((i) => {
        const angle = Math.atan2(sin[i], cos[i]);
        const seenUpTo = st.lTrain * base[i];  // the angle range training covered
        const wrapped = ((angle % TWO_PI) + TWO_PI) % TWO_PI;
        return { pair: i, angle, wavelength: TWO_PI / scaled[i], unseen: seenUpTo < TWO_PI && wrapped > seenUpTo };
      });
      return { clocks, pos: st.pos };
    },
    plot: (d, cursor) => ({ kind: 'custom', spec: { draw: drawClocks, data: d, cursor } }),
    readout: (d, c) => {
      const k = d.clocks[c.i];
      return `pos ${d.pos}, pair ${k.pair}: angle ${fmt(k.angle, 5)} rad, wavelength ${fmt(k.wavelength, 4)}${k.unseen ? ' — never seen in training' : ''}; ${d.clocks.filter((x) => x.unseen).length} of ${d.clocks.length} shown pairs unseen`;
    },
    csv: (d) => csvLines(['pair', 'angle_rad', 'wavelength', 'unseen_in_training'], d.clocks.map((k) => [k.pair, k.angle, k.wavelength, k.unseen ? 1 : 0])),
    caption: (st) => `rope clocks pos=${st.pos} theta=${st.base} scaling=${st.scaling} L_train=${st.lTrain} precision=${st.precision}`,
    cursor0: linesCursor,
  },
  {
    id: 'score-vs-distance',
    title: 'Score against distance Δ, each scheme overlaid',
    explain: 'How each scheme makes a query–key score depend on their distance Δ. Left axis: RoPE (the score of identical all-ones vectors decays and oscillates), sinusoidal PE(0)·PE(Δ), and T5\'s bucket index as a fraction of the last bucket (its bias is a learned value per bucket: steps). Right axis: ALiBi\'s bias, a straight line per head. Choose schemes in the settings.',
    compute({ pe, st, extras }) {
      const last = Math.min(st.seqLen - 1, 8191);
      const xs = samplePositions(Math.max(1, last), 1024);
      const schemes = schemesOf(st);
      const series = [];
      if (schemes.includes('sinusoidal')) {
        const rows = pe.sinusoidal(xs.length, st.dModel, { base: st.base, layout: st.sinLayout, positions: xs });
        const y = Float64Array.from(xs, (_, i) => { let s = 0; for (let k = 0; k < st.dModel; k++) s += rows[k] * rows[i * st.dModel + k]; return s / (st.dModel / 2); });
        series.push({ label: 'sinusoidal PE(0)·PE(Δ) / (d/2)', x: xs, y, color: SERIES[0] });
      }
      if (schemes.includes('rope')) {
        const ones = new Float32Array(xs.length * st.dModel).fill(1);
        const rotated = pe.applyRope(ones, { seqLen: xs.length, nHeads: 1, headDim: st.dModel, params: ropeParams(st, extras), positions: xs, layout: st.layout, precision: st.precision });
        const y = Float64Array.from(xs, (_, i) => { let s = 0; for (let k = 0; k < st.dModel; k++) s += rotated[i * st.dModel + k]; return s / st.dModel; });
        series.push({ label: 'RoPE q·k / d (q = k = 1)', x: xs, y, color: SERIES[1] });
      }
      if (schemes.includes('alibi')) {
        const n = xs[xs.length - 1] + 1;
        const bias = pe.alibiBias(st.heads, 1, n, { causal: true, maxBias: st.maxBias });
        for (const h of [...new Set([0, Math.floor((st.heads - 1) / 2), st.heads - 1])]) {
          series.push({ label: `ALiBi head ${h} bias (right)`, x: xs, y: Float64Array.from(xs, (dx) => bias[h * n + (n - 1 - dx)]), color: SERIES[2 + (h % 3)], dash: [4, 2], axis: 2 });
        }
      }
      if (schemes.includes('t5')) {
        const buckets = pe.t5Bucket(Float64Array.from(xs, (dx) => -dx), { bidirectional: st.t5Bidir, numBuckets: st.t5Buckets, maxDistance: st.t5MaxDist });
        series.push({ label: `T5 bucket / ${st.t5Buckets - 1}`, x: xs, y: Float64Array.from(buckets, (b) => b / (st.t5Buckets - 1)), color: SERIES[5], step: true });
      }
      return { xs, series };
    },
    plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series.length ? d.series : [{ label: 'choose a scheme', x: d.xs, y: new Float64Array(d.xs.length), color: '#999' }], xLabel: 'distance Δ = i − j (positions)', yLabel: 'normalized score · T5 bucket fraction', y2Label: 'ALiBi bias', cursor } }),
    readout: (d, c) => `Δ = ${d.xs[c.i]}: ${d.series.map((s) => `${s.label} = ${fmt(s.y[c.i], 5)}`).join('; ')}`,
    csv: (d) => linesCsv('delta', d.xs, d.series),
    caption: (st) => `scores schemes=${st.schemes} d=${st.dModel} base=${st.base} heads=${st.heads} max_bias=${st.maxBias} t5=${st.t5Buckets}/${st.t5MaxDist}`,
    cursor0: linesCursor,
  },
  {
    id: 'similarity',
    title: 'Similarity PE(i)·PE(j): relative by construction',
    explain: 'The dot product of two sinusoidal vectors depends only on the distance i − j: every diagonal of this matrix is constant (checked in the read-out), which is why attention can learn relative offsets from absolute encodings.',
    compute(ctx) {
      const { st } = ctx;
      const budget = Math.max(8, Math.floor(Math.sqrt(4e6 / st.dModel)));
      const xs = samplePositions(st.seqLen - 1, Math.min(256, budget));
      const n = xs.length, d = st.dModel;
      const rows = sinusoidalRows(ctx, xs);
      const values = new Float32Array(n * n);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          let s = 0;
          for (let k = 0; k < d; k++) s += rows[i * d + k] * rows[j * d + k];
          values[i * n + j] = s / (d / 2);
        }
      }
      // Diagonal spread: with evenly spaced samples, (i, j) and (i+1, j+1) are the same distance apart.
      const step = n > 1 ? xs[1] - xs[0] : 1;
      const even = xs.every((x, i) => i === 0 || x - xs[i - 1] === step);
      let spread = 0;
      if (even) for (let i = 0; i + 1 < n; i++) for (let j = 0; j + 1 < n; j++) spread = Math.max(spread, Math.abs(values[i * n + j] - values[(i + 1) * n + j + 1]));
      return { xs, ys: xs, nx: n, ny: n, values, spread: even ? spread : null };
    },
    plot: (d, cursor) => ({ kind: 'heatmap', spec: { values: d.values, nx: d.nx, ny: d.ny, xDomain: [d.xs[0], d.xs[d.nx - 1]], yDomain: [d.xs[0], d.xs[d.ny - 1]], lo: -1, hi: 1, lut: DIVERGING, xLabel: 'position i', yLabel: 'position j', legendLabel: 'PE(i)·PE(j) / (d/2)', cursor } }),
    readout: (d, c) => `PE(${d.xs[c.x]})·PE(${d.ys[c.y]}) / (d/2) = ${fmt(d.values[c.x * d.ny + c.y])}, distance ${d.xs[c.x] - d.ys[c.y]}; ${d.spread === null ? 'uneven sampling: diagonal check off' : `largest change along a diagonal: ${fmt(d.spread, 3)} (relative invariance holds to float32)`}`,
    csv: (d) => heatmapCsv(d, 'i', 'j', 'similarity'),
    caption: (st) => `similarity sinusoidal seq_len=${st.seqLen} d_model=${st.dModel} base=${st.base}`,
    cursor0: heatmapCursor,
  },
  {
    id: 'attention',
    title: 'Attention without and with positions: "dog bites man" / "man bites dog"',
    explain: 'The same three word vectors (seeded random embeddings, d = min(d_model, 16)) in two orders, attended to by themselves. Without positions, attention is a function of the set of words: each word gets exactly the same output in both sentences. Adding sinusoidal positions makes the order visible.',
    compute({ pe, st }) {
      const d = Math.min(st.dModel, 16);
      const words = ['dog', 'bites', 'man'];
      const embeddings = pe.learnedTable(3, d, { seed: 7, std: 0.5 }).weights;
      const positions = pe.sinusoidal(3, d, { base: st.base });
      const sentences = [[0, 1, 2], [2, 1, 0]];
      const panels = [];
      const outputs = {};
      for (const withPos of [false, true]) {
        for (const tokens of sentences) {
          const x = pe.embed(tokens, { tokenEmbeddings: embeddings, dModel: d, positionTable: withPos ? positions : new Float32Array(3 * d), scale: 1 });
          const { output, weights } = pe.attention(x, x, x, { nHeads: 1, headDim: d, returnWeights: true });
          panels.push({ title: `${tokens.map((t) => words[t]).join(' ')} — ${withPos ? 'with' : 'without'} positions`, labels: tokens.map((t) => words[t]), weights });
          outputs[`${withPos}:${tokens[0]}`] = { output, tokens };
        }
      }
      // The output vector of "dog" in sentence A versus B.
      const dogDiff = (withPos) => {
        const a = outputs[`${withPos}:0`], b = outputs[`${withPos}:2`];
        const ia = a.tokens.indexOf(0), ib = b.tokens.indexOf(0);
        let m = 0;
        for (let k = 0; k < d; k++) m = Math.max(m, Math.abs(a.output[ia * d + k] - b.output[ib * d + k]));
        return m;
      };
      return { panels, without: dogDiff(false), with: dogDiff(true), d };
    },
    plot: (d, cursor) => ({ kind: 'custom', spec: { draw: drawAttentionPanels, data: d, cursor } }),
    readout: (d, c) => {
      const p = d.panels[c.panel];
      return `${p.title}: weight of "${p.labels[c.row]}" on "${p.labels[c.col]}" = ${fmt(p.weights[c.row * 3 + c.col], 4)}. Output of "dog" differs between the sentences by ${fmt(d.without, 3)} without positions, ${fmt(d.with, 3)} with them.`;
    },
    csv: (d) => csvLines(['panel', 'query', 'key', 'weight'], d.panels.flatMap((p) => p.labels.flatMap((q, r) => p.labels.map((k, c) => [p.title.replace(/,/g, ' '), q, k, p.weights[r * 3 + c]])))),
    caption: (st) => `attention dog/man d=${Math.min(st.dModel, 16)} base=${st.base}`,
    cursor0: () => ({ panel: 0, row: 0, col: 0 }),
  },
  {
    id: 'alibi',
    title: 'ALiBi: slopes and per-head bias',
    explain: 'ALiBi adds −slope·distance to each score instead of encoding positions: one slope per head, a geometric series (2<sup>−8/n</sup>, 2<sup>−16/n</sup>, …; BLOOM, MPT). Rows: heads; columns: how far back the key is. Steep heads look locally, shallow ones far.',
    compute({ pe, st }) {
      const n = Math.min(st.seqLen, 512);
      const bias = pe.alibiBias(st.heads, 1, n, { causal: true, maxBias: st.maxBias });
      const slopes = pe.alibiSlopes(st.heads, { maxBias: st.maxBias });
      // x = distance back from the query (0 … n-1), y = head.
      const values = new Float32Array(n * st.heads);
      let lo = 0;
      for (let dx = 0; dx < n; dx++) for (let h = 0; h < st.heads; h++) { values[dx * st.heads + h] = bias[h * n + (n - 1 - dx)]; lo = Math.min(lo, values[dx * st.heads + h]); }
      return { xs: Float64Array.from({ length: n }, (_, i) => i), nx: n, ny: st.heads, values, slopes, lo: Math.min(lo, -1e-6) };
    },
    plot: (d, cursor) => ({ kind: 'heatmap', spec: { values: d.values, nx: d.nx, ny: d.ny, lo: d.lo, hi: 0, lut: SEQUENTIAL, xLabel: 'distance back from the query (positions)', yLabel: 'head', legendLabel: 'bias −slope·distance', cursor } }),
    readout: (d, c) => `head ${c.y} (slope ${fmt(d.slopes[c.y], 6)} = 2^${fmt(Math.log2(d.slopes[c.y]), 2)}), distance ${c.x}: bias ${fmt(d.values[c.x * d.ny + c.y], 5)}`,
    csv: (d) => heatmapCsv(d, 'distance', 'head', 'bias'),
    caption: (st) => `alibi heads=${st.heads} max_bias=${st.maxBias}`,
    cursor0: heatmapCursor,
  },
  {
    id: 't5-buckets',
    title: 'T5 relative position buckets',
    explain: 'T5 learns one bias per head and bucket. Distances below half the buckets each get their own bucket; larger ones share logarithmically wider buckets up to max_distance. Bidirectional (encoder) buckets tell keys after the query apart from keys before it.',
    compute({ pe, st }) {
      const reach = Math.min(2 * st.t5MaxDist, 4096);
      const xs = Float64Array.from({ length: 2 * reach + 1 }, (_, i) => i - reach);
      const bi = pe.t5Bucket(xs, { bidirectional: true, numBuckets: st.t5Buckets, maxDistance: st.t5MaxDist });
      const uni = pe.t5Bucket(xs, { bidirectional: false, numBuckets: st.t5Buckets, maxDistance: st.t5MaxDist });
      const series = [
        { label: 'bidirectional (encoder)', x: xs, y: Float64Array.from(bi), color: SERIES[0], step: true },
        { label: 'unidirectional (decoder)', x: xs, y: Float64Array.from(uni), color: SERIES[1], step: true, dash: [5, 3] },
      ];
      return { xs, series };
    },
    plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, xLabel: 'relative position = key − query', yLabel: 'bucket', vlines: [{ x: 0, label: 'query' }], cursor } }),
    readout: (d, c) => `key − query = ${d.xs[c.i]}: bucket ${d.series[0].y[c.i]} (bidirectional), ${d.series[1].y[c.i]} (unidirectional)`,
    csv: (d) => linesCsv('relative_position', d.xs, d.series),
    caption: (st) => `t5 num_buckets=${st.t5Buckets} max_distance=${st.t5MaxDist}`,
    cursor0: (d) => ({ i: Math.floor(d.xs.length / 2) }),
  },
  {
    id: 'precision',
    title: 'Precision: angle error of float32 RoPE against position',
    explain: 'The angle pos·θ<sub>i</sub> formed in float32 (as HF and llama.cpp do) loses digits as positions grow: rounding θ<sub>i</sub> alone costs ~6e-8 relative, times the position. <em>accurate</em> forms it in float64 and reduces it mod 2π first. The error is the worst over all pairs against the exact float64 angle.',
    compute({ pe, st, extras }) {
      const params = ropeParams(st, extras);
      const exact = pe.ropeFrequencies(params, { seqLen: st.lTarget, dtype: 'float64' }).invFreq;
      const xs = Float64Array.from({ length: 41 }, (_, i) => Math.round(2 ** (i / 2)));
      const errors = {};
      for (const precision of ['fast', 'accurate']) {
        const { cos, sin } = pe.ropeCache({ invFreq: exact, positions: xs, precision });
        const half = exact.length;
        errors[precision] = Float64Array.from(xs, (p, t) => {
          let worst = 0;
          for (let k = 0; k < half; k++) {
            let e = Math.atan2(sin[t * half + k], cos[t * half + k]) - ((p * exact[k]) % TWO_PI);
            e = Math.abs(e - TWO_PI * Math.round(e / TWO_PI));
            worst = Math.max(worst, e);
          }
          return Math.max(worst, 1e-9);
        });
      }
      return { xs, series: [
        { label: "precision: 'fast' (float32 angle)", x: xs, y: errors.fast, color: SERIES[1] },
        { label: "precision: 'accurate' (float64, reduced)", x: xs, y: errors.accurate, color: SERIES[0] },
      ] };
    },
    plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, xLabel: 'position (log)', yLabel: 'max angle error (rad, log)', xLog: true, yLog: true, hlines: [{ y: 1e-6, label: '1e-6 rad' }], cursor } }),
    readout: (d, c) => `pos ${d.xs[c.i]}: fast ${fmt(d.series[0].y[c.i], 3)} rad, accurate ${fmt(d.series[1].y[c.i], 3)} rad`,
    csv: (d) => linesCsv('pos', d.xs, d.series),
    caption: (st) => `precision head_dim=${st.dModel} theta=${st.base} scaling=${st.scaling}`,
    cursor0: (d) => ({ i: d.xs.length - 1 }),
  },
  {
    id: 'compare',
    title: 'Compare: A/B difference of the RoPE cos table',
    explain: 'cos(pos·θ<sub>i</sub>) with the current scaling (A) minus the same with the scaling chosen in <em>compare with</em> (B), for positions up to L<sub>target</sub>. Zero where the two agree: YaRN and llama3 leave the fast pairs untouched, linear changes every pair.',
    compute({ pe, st, extras }) {
      const last = Math.max(st.seqLen, st.lTarget) - 1;
      const xs = samplePositions(last, 1024);
      const a = pe.ropeCache({ params: ropeParams(st, extras), positions: xs, precision: st.precision });
      const b = pe.ropeCache({ params: ropeParams(st, extras, st.compare), positions: xs, precision: st.precision });
      const half = a.rotaryDim / 2;
      const values = Float32Array.from(a.cos, (v, i) => v - b.cos[i]);
      return { xs, nx: xs.length, ny: half, values };
    },
    plot: (d, cursor) => ({ kind: 'heatmap', spec: { values: d.values, nx: d.nx, ny: d.ny, xDomain: [d.xs[0], d.xs[d.nx - 1]], lo: -2, hi: 2, lut: DIVERGING, xLabel: 'position', yLabel: 'rotary pair i', legendLabel: 'cos A − cos B', cursor } }),
    readout: (d, c, st) => `pos ${d.xs[c.x]}, pair ${c.y}: cos(${st.scaling}) − cos(${st.compare}) = ${fmt(d.values[c.x * d.ny + c.y], 5)}`,
    csv: (d) => heatmapCsv(d, 'pos', 'pair', 'cos_a_minus_cos_b'),
    caption: (st) => `compare A=${st.scaling} B=${st.compare} theta=${st.base} L_train=${st.lTrain} L_target=${st.lTarget}`,
    cursor0: heatmapCursor,
  },
];

// ---- custom drawings --------------------------------------------------------------------------------

function drawClocks(ctx, width, height, { data, cursor }, colors) {
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  const n = data.clocks.length;
  // The largest square cells that fit all clocks above the caption line.
  let cols = 1;
  for (let c = 1; c <= n; c++) {
    const size = Math.min(width / c, (height - 24) / Math.ceil(n / c));
    if (size >= Math.min(width / cols, (height - 24) / Math.ceil(n / cols))) cols = c;
  }
  const cell = Math.min(width / cols, (height - 24) / Math.ceil(n / cols));
  const r = Math.max(4, cell * 0.38);
  ctx.font = '10px "DejaVu Sans", sans-serif';
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  const centres = data.clocks.map((k, idx) => {
    const cx = (idx % cols + 0.5) * cell, cy = Math.floor(idx / cols) * cell + cell / 2;
    ctx.lineWidth = k.unseen ? 3 : 1;
    ctx.strokeStyle = k.unseen ? colors.mark : colors.muted;
    ctx.beginPath(); ctx.arc(cx, cy, r, 0, TWO_PI); ctx.stroke();
    ctx.strokeStyle = colors.fg;
    ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(cx, cy); ctx.lineTo(cx + r * Math.cos(k.angle), cy - r * Math.sin(k.angle)); ctx.stroke();
    if (cursor && cursor.i === idx) {
      ctx.strokeStyle = colors.mark;
      ctx.lineWidth = 2;
      ctx.strokeRect(cx - cell / 2 + 1, cy - cell / 2 + 1, cell - 2, cell - 2);
    }
    if (cell > 30) { ctx.fillStyle = colors.muted; ctx.fillText(String(k.pair), cx, cy + r + 1); }
    return [cx, cy];
  });
  ctx.fillStyle = colors.fg;
  ctx.font = '12px "DejaVu Sans", sans-serif';
  ctx.textAlign = 'left';
  ctx.textBaseline = 'bottom';
  ctx.fillText(`position ${data.pos}: hand = angle of pair i (0 rad pointing right, counter-clockwise); red rim = never seen in training`, 4, height - 4);
  return {
    hit(cx, cy) {
      let best = -1, bd = Infinity;
      centres.forEach(([x, y], i) => { const dd = (x - cx) ** 2 + (y - cy) ** 2; if (dd < bd) { bd = dd; best = i; } });
      return best >= 0 && bd <= cell * cell ? { i: best } : null;
    },
  };
}

function drawAttentionPanels(ctx, width, height, { data, cursor }, colors) {
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  const pw = width / 2, ph = (height - 30) / 2;
  const boxes = [];
  data.panels.forEach((p, idx) => {
    const ox = (idx % 2) * pw, oy = Math.floor(idx / 2) * ph;
    const size = Math.min(pw - 90, ph - 40) / 3;
    const x0 = ox + 70, y0 = oy + 22;
    ctx.fillStyle = colors.fg;
    ctx.font = '12px "DejaVu Sans", sans-serif';
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.fillText(p.title, ox + 8, oy + 4);
    for (let r = 0; r < 3; r++) {
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      ctx.fillStyle = colors.fg;
      ctx.fillText(p.labels[r], x0 - 6, y0 + (r + 0.5) * size);
      for (let c = 0; c < 3; c++) {
        const w = p.weights[r * 3 + c];
        const k = Math.min(255, Math.round(w * 255)) * 3;
        ctx.fillStyle = `rgb(${SEQUENTIAL[k]},${SEQUENTIAL[k + 1]},${SEQUENTIAL[k + 2]})`;
        ctx.fillRect(x0 + c * size, y0 + r * size, size - 1, size - 1);
        ctx.fillStyle = w > 0.6 ? '#000' : '#fff';
        ctx.textAlign = 'center';
        ctx.fillText(w.toFixed(2), x0 + (c + 0.5) * size, y0 + (r + 0.5) * size);
        if (cursor && cursor.panel === idx && cursor.row === r && cursor.col === c) {
          ctx.strokeStyle = colors.mark;
          ctx.lineWidth = 2;
          ctx.strokeRect(x0 + c * size, y0 + r * size, size - 1, size - 1);
        }
        boxes.push({ panel: idx, row: r, col: c, x: x0 + c * size, y: y0 + r * size, size });
      }
    }
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    ctx.fillStyle = colors.muted;
    for (let c = 0; c < 3; c++) ctx.fillText(p.labels[c], x0 + (c + 0.5) * size, y0 + 3 * size + 2);
  });
  ctx.fillStyle = colors.fg;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'bottom';
  ctx.fillText(`rows: query word, columns: key word, colour: weight 0 → 1. "dog" output differs by ${data.without.toExponential(1)} without positions, ${data.with.toExponential(1)} with.`, 6, height - 4, width - 12);
  return {
    hit(cx, cy) {
      const b = boxes.find((q) => cx >= q.x && cx < q.x + q.size && cy >= q.y && cy < q.y + q.size);
      return b ? { panel: b.panel, row: b.row, col: b.col } : null;
    },
  };
}

/** Moves a cursor one step for an arrow key, within the data's bounds. */
export function moveCursor(view, data, cursor, key) {
  const dx = key === 'ArrowRight' ? 1 : key === 'ArrowLeft' ? -1 : 0;
  const dy = key === 'ArrowUp' ? 1 : key === 'ArrowDown' ? -1 : 0;
  const clamp = (v, n) => Math.max(0, Math.min(n - 1, v));
  if ('x' in cursor) return { x: clamp(cursor.x + dx, data.nx), y: clamp(cursor.y + dy, data.ny) };
  if ('panel' in cursor) {
    const col = cursor.col + dx, row = cursor.row - dy;
    const panel = clamp(cursor.panel + (col > 2 ? 1 : col < 0 ? -1 : 0) + (row > 2 ? 2 : row < 0 ? -2 : 0), 4);
    return { panel, row: (row + 3) % 3, col: (col + 3) % 3 };
  }
  const n = view.id === 'clocks' ? data.clocks.length : data.xs.length;
  return { i: clamp(cursor.i + dx - dy, n) };
}
