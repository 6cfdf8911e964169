// The lesson's chapters, as index.html declares them: each <section data-chapter> holds its prose
// and, inside .views, one <section data-view="id"> per view with the view's title and
// explanation; the view's code is web/views/<id>.js. So adding a view is its module and its
// section in index.html; adding a chapter is a section (and its line in the contents) there.
// This file adds the settings some chapters share (CHAPTER_CONTROLS) and builds every view.
import { buildControl } from './controls.js';
import { SCALINGS } from './state.js';
import { createView } from './view.js';

const yarn = (st) => st.scaling === 'yarn', llama3 = (st) => st.scaling === 'llama3';
const scaled = (st) => !['none', 'longrope'].includes(st.scaling);
const theta = ['theta', { label: 'θ (rope_theta)', slider: { min: 2, max: 1e7, log: true } }];

/** The settings bar at the top of a chapter, by chapter name: [setting, control options] (controls.js). */
export const CHAPTER_CONTROLS = {
  sinusoidal: [
    ['base', { label: 'base', slider: { min: 2, max: 1e7, log: true } }],
    ['sinLayout', { kind: 'select', label: 'layout' }],
  ],
  rope: [
    theta,
    ['layout', { kind: 'select', label: 'pair layout' }],
    ['partial', { label: 'partial rotary', slider: { min: 0.05, max: 1 } }],
  ],
  'long-context': [
    ['scaling', { kind: 'select', label: 'scaling (A)', values: SCALINGS }],
    ['factor', { label: 'factor', slider: { min: 1, max: 64, log: true }, when: scaled }],
    ['lTrain', { label: 'L_train', slider: { min: 16, max: 1048576, log: true } }],
    ['lTarget', { label: 'L_target', slider: { min: 16, max: 4194304, log: true } }],
    [theta[0], { ...theta[1], suffix: '-long' }],
    ['betaFast', { label: 'YaRN β_fast', when: yarn }],
    ['betaSlow', { label: 'YaRN β_slow', when: yarn }],
    ['truncate', { kind: 'checkbox', label: 'YaRN truncate', when: yarn }],
    ['lowFreq', { label: 'llama3 low_freq_factor', when: llama3 }],
    ['highFreq', { label: 'llama3 high_freq_factor', when: llama3 }],
    ['precision', { kind: 'select', label: 'precision' }],
  ],
};

const viewSections = (root) => [...root.querySelectorAll('section[data-chapter] .views > section[data-view]')];

/**
 * Loads the module of every view index.html places (web/views/<id>.js), in parallel; resolves to
 * Map id → view definition. Call it early: it runs while the package loads.
 */
export async function loadViews(root = document) {
  const ids = viewSections(root).map((s) => s.dataset.view);
  const defs = await Promise.all(ids.map(async (id) => {
    const def = (await import(`./views/${id}.js`)).default;
    if (def?.id !== id) throw new Error(`web/views/${id}.js must export a default view with id '${id}'`);
    return def;
  }));
  return new Map(defs.map((d) => [d.id, d]));
}

/**
 * Builds the chapters' settings bars and every view, in page order. host: createView's (view.js).
 * Returns { views, controls } (the chapters' controls; each view holds its own).
 */
export function buildChapters(defs, host, root = document) {
  const views = [], controls = [];
  for (const chapter of root.querySelectorAll('section[data-chapter]')) {
    const name = chapter.dataset.chapter;
    const box = chapter.querySelector('.views');
    if (CHAPTER_CONTROLS[name]) {
      const bar = document.createElement('div');
      bar.className = 'chapter-controls';
      bar.setAttribute('aria-label', `${name} settings`);
      for (const [key, o] of CHAPTER_CONTROLS[name]) {
        const c = buildControl(key, o, host.onChange);
        bar.append(c.element);
        controls.push(c);
      }
      box.before(bar);
    }
    for (const section of box.querySelectorAll(':scope > section[data-view]')) {
      views.push(createView(defs.get(section.dataset.view), section, host));
    }
  }
  return { views, controls };
}
