// The lesson's chapters, as index.html declares them: each <section data-chapter> holds its prose
// and, inside .views, one <section data-view="id"> per view with the view's title and
// explanation; the view's code is web/views/<id>.js. What goes beyond the lesson sits in the
// chapter's fold (<details class="deeper">, web/page/folds.js), in a .views of its own. So adding a view
// is its module and its section in index.html; adding a chapter is a section (and its line in the
// contents) there. This file adds the settings some chapters share (CHAPTER_CONTROLS) and builds
// every view.
import { buildControl } from './controls.js';
import { SCALINGS } from '../settings/state.js';
import { evenPartial, partialRule } from '../settings/rope-settings.js';
import { createView, reserveHeights } from './view.js';

// Settings of one scaling: the others leave them disabled (controls.js `when`).
const yarn = { when: (st) => st.scaling === 'yarn', whenText: 'with scaling (A) yarn' };
const llama3 = { when: (st) => st.scaling === 'llama3', whenText: 'with scaling (A) llama3' };
const theta = ['theta', { label: 'θ (rope_theta)', slider: { min: 2, max: 1e7, log: true } }];

/**
 * The settings bar at the top of a chapter, by chapter name: [setting, control options]
 * (controls.js). Those with `fold: true` act only on the views in the chapter's fold, and their bar
 * is the fold's first line.
 */
const CHAPTER_CONTROLS = {
  sinusoidal: [
    ['base', { label: 'base', slider: { min: 2, max: 1e7, log: true } }],
    ['sinLayout', { kind: 'select', label: 'layout' }],
  ],
  rope: [
    theta,
    ['layout', { kind: 'select', label: 'pair layout' }],
    // The slider stops only where the rotated width is even; a typed value that is not is refused.
    ['partial', { label: 'partial rotary', slider: (st) => ({ min: 0.05, max: 1, snap: (v) => evenPartial(v, st.dModel) }),
      validate: partialRule }],
  ],
  'long-context': [
    ['factor', { label: 'factor s', slider: { min: 1, max: 64, log: true } }],
    ['lTrain', { label: 'L_train', slider: { min: 16, max: 1048576, log: true } }],
    [theta[0], { ...theta[1], suffix: '-long' }],
    ['scaling', { kind: 'select', label: 'scaling (A)', values: SCALINGS, fold: true }],
    ['lTarget', { label: 'L_target', slider: { min: 16, max: 4194304, log: true }, fold: true }],
    ['betaFast', { label: 'YaRN β_fast', ...yarn, fold: true }],
    ['betaSlow', { label: 'YaRN β_slow', ...yarn, fold: true }],
    ['truncate', { kind: 'checkbox', label: 'YaRN truncate', ...yarn, fold: true }],
    ['lowFreq', { label: 'llama3 low_freq_factor', ...llama3, fold: true }],
    ['highFreq', { label: 'llama3 high_freq_factor', ...llama3, fold: true }],
    ['precision', { kind: 'select', label: 'precision', fold: true }],
  ],
};

const viewSections = (root) => [...root.querySelectorAll('section[data-chapter] .views section[data-view]')];

// A chapter's bar of settings (entries: CHAPTER_CONTROLS's) before `box`, a .views; none without entries.
function controlBar(name, entries, box, onChange, controls) {
  if (!entries.length) return;
  const bar = document.createElement('div');
  bar.className = 'chapter-controls';
  bar.setAttribute('role', 'group');
  bar.setAttribute('aria-label', `${name} settings`);
  for (const [key, o] of entries) {
    const c = buildControl(key, o, onChange);
    bar.append(c.element);
    controls.push(c);
  }
  box.before(bar);
}

/**
 * Loads the module of every view index.html places (web/views/<id>.js), in parallel; resolves to
 * Map id → view definition. Call it early: it runs while the package loads.
 */
export async function loadViews(root = document) {
  const ids = viewSections(root).map((s) => s.dataset.view);
  const defs = await Promise.all(ids.map(async (id) => {
    const def = (await import(`../views/${id}.js`)).default;
    if (def?.id !== id) throw new Error(`web/views/${id}.js must export a default view with id '${id}'`);
    return def;
  }));
  return new Map(defs.map((d) => [d.id, d]));
}

// A chapter's worth of building is one task; the page yields between chapters, so building all of
// them (hidden until the first views are drawn) never holds the page for long.
const yieldToPage = () => new Promise((resolve) => { setTimeout(resolve, 0); });

/**
 * Builds the chapters' settings bars and every view, in page order, a chapter per task. host:
 * createView's (view.js). Resolves to { views, controls } (the chapters' controls; each view holds
 * its own).
 */
export async function buildChapters(defs, host, root = document) {
  const views = [], controls = [];
  for (const chapter of root.querySelectorAll('section[data-chapter]')) {
    await yieldToPage();
    const name = chapter.dataset.chapter;
    const entries = CHAPTER_CONTROLS[name] ?? [];
    const core = chapter.querySelector(':scope > .views');
    const fold = chapter.querySelector(':scope > details.deeper > .views');
    controlBar(name, entries.filter(([, o]) => !o.fold), core, host.onChange, controls);
    if (fold) controlBar(`${name} (go deeper)`, entries.filter(([, o]) => o.fold), fold, host.onChange, controls);
    const built = [];
    for (const box of [core, fold].filter(Boolean)) {
      for (const section of box.querySelectorAll('section[data-view]')) {  // .pair puts two side by side
        built.push(createView(defs.get(section.dataset.view), section, host));
      }
    }
    reserveHeights(built);
    views.push(...built);
  }
  return { views, controls };
}
