// The lesson's chapters in order, each with its shared settings and its views. The prose of each
// chapter is in index.html; a view's compute and drawing live side by side in web/views/.
import { SCALINGS } from './state.js';
import attention from './views/attention.js';
import embedding from './views/embedding.js';
import pe_heatmap from './views/pe-heatmap.js';
import dim_traces from './views/dim-traces.js';
import similarity from './views/similarity.js';
import shift from './views/shift.js';
import learned from './views/learned.js';
import rope_rotation from './views/rope-rotation.js';
import rope_relative from './views/rope-relative.js';
import cross_terms from './views/cross-terms.js';
import alibi from './views/alibi.js';
import t5_buckets from './views/t5-buckets.js';
import spectrum from './views/spectrum.js';
import clocks from './views/clocks.js';
import compare from './views/compare.js';
import precision from './views/precision.js';
import score_vs_distance from './views/score-vs-distance.js';
import comparison_table from './views/comparison-table.js';
import mrope from './views/mrope.js';
import rope_2d from './views/rope-2d.js';
import attention_window from './views/attention-window.js';
import irope from './views/irope.js';
import context_shift from './views/context-shift.js';
import lab_training from './views/lab-training.js';
import lab_extrapolation from './views/lab-extrapolation.js';

const yarn = (st) => st.scaling === 'yarn', llama3 = (st) => st.scaling === 'llama3';
const theta = ['theta', { label: 'θ (rope_theta)', slider: { min: 2, max: 1e7, log: true } }];

export const CHAPTERS = [
  { name: 'order', views: [attention] },
  { name: 'embedding', views: [embedding] },
  {
    name: 'sinusoidal',
    controls: [['base', { label: 'base', slider: { min: 2, max: 1e7, log: true } }], ['sinLayout', { kind: 'select', label: 'layout' }]],
    views: [pe_heatmap, dim_traces, similarity, shift],
  },
  { name: 'learned', views: [learned] },
  {
    name: 'rope',
    controls: [theta, ['layout', { kind: 'select', label: 'pair layout' }], ['partial', { label: 'partial rotary', slider: { min: 0.05, max: 1 } }]],
    views: [rope_rotation, rope_relative, cross_terms, mrope, rope_2d],
  },
  { name: 'bias', views: [alibi, t5_buckets] },
  {
    name: 'long-context',
    controls: [
      ['scaling', { kind: 'select', label: 'scaling (A)', values: SCALINGS }],
      ['factor', { label: 'factor', slider: { min: 1, max: 64, log: true }, when: (st) => !['none', 'longrope'].includes(st.scaling) }],
      ['lTrain', { label: 'L_train', slider: { min: 16, max: 1048576, log: true } }],
      ['lTarget', { label: 'L_target', slider: { min: 16, max: 4194304, log: true } }],
      [...theta.slice(0, 1), { ...theta[1], suffix: '-long' }],
      ['betaFast', { label: 'YaRN β_fast', when: yarn }],
      ['betaSlow', { label: 'YaRN β_slow', when: yarn }],
      ['truncate', { kind: 'checkbox', label: 'YaRN truncate', when: yarn }],
      ['lowFreq', { label: 'llama3 low_freq_factor', when: llama3 }],
      ['highFreq', { label: 'llama3 high_freq_factor', when: llama3 }],
      ['precision', { kind: 'select', label: 'precision' }],
    ],
    views: [spectrum, clocks, compare, precision, attention_window, irope, context_shift],
  },
  { name: 'comparison', views: [score_vs_distance, comparison_table] },
  { name: 'lab', views: [lab_training, lab_extrapolation] },
];
