// The explorer's entry: loads the package (and the view modules, at the same time), reads the
// presets, then puts the page's parts together — the settings and the URL (settings.js), the
// settings bar (settings-bar.js), the chapters and their views
// (chapters.js, view.js, views/), the "go deeper" folds (folds.js), the guided steps (guide.js),
// the prose that follows the settings (prose.js), the errata (errata.js), the notices for what the
// page could not do as asked (notices.js), the redraws (scheduler.js) — and keeps them in step. This file holds no maths: views compute with the
// posenc package.
import { init } from '../dist/browser.js';
import { buildChapters, loadViews } from './chapters.js';
import { buildErrata } from './errata.js';
import { setupFolds } from './folds.js';
import { buildGuides } from './guide.js';
import { createLab } from './lab.js';
import { createNotices, droppedText, refusedText } from './notices.js';
import { setupPageLinks } from './page-links.js';
import { updateProse } from './prose.js';
import { readPresets } from './presets.js';
import { createScheduler } from './scheduler.js';
import { applyTheme, createSettingsBar } from './settings-bar.js';
import { createSettings } from './settings.js';
import { FIELDS, defaults } from './state.js';

const $ = (id) => document.getElementById(id);

// The banner that says why the page cannot start.
function fail(message, status) {
  $('error').textContent = message;
  $('error').hidden = false;
  $('status').textContent = status;
  document.body.dataset.ready = 'error';
  return null;
}

/**
 * The package, the view modules and the presets, or null (the banner says why). The lab's shipped
 * result is fetched later, when a view first needs it (lab.need).
 */
async function load(lab) {
  const views = loadViews();
  views.catch(() => {});  // a failure is reported below, once the package is in
  let pe;
  try {
    // Threads when the page is cross-origin isolated (scripts/serve.mjs sends COOP/COEP), else one.
    pe = await init({ threads: Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1)) });
    lab.setSchemes(pe.lab.schemes);
  } catch (e) {
    return fail(`The posenc WebAssembly module failed to load: ${e.message}. The explorer needs a browser with WebAssembly SIMD.`,
      'WebAssembly module not loaded.');
  }
  try {
    return { pe, defs: await views, presets: await readPresets(pe) };
  } catch (e) {
    return fail(`The explorer could not start: ${e.message}.`, 'The explorer did not start.');
  }
}

async function main() {
  applyTheme();
  const lab = createLab();
  const loaded = await load(lab);
  if (!loaded) return;
  const { pe, defs, presets } = loaded;
  // A link names a preset and what differs from it: its other keys take the preset's settings.
  const baseOf = (id) => {
    const r = id ? presets.get(id) : null;
    return r ? { ...r.state, preset: id, model: '' } : defaults();
  };
  const settings = createSettings({ baseOf });
  const { extras } = settings;
  const notices = createNotices($('notices'));
  // What a link asked for and the page refused: said once, the URL already corrected.
  const refused = [...settings.refused];
  if (settings.state.preset && !presets.get(settings.state.preset)) {
    refused.push({ key: 'preset', text: settings.state.preset, why: 'no model in the list has that id' });
    settings.refuse({ preset: '' });
  }
  if (refused.length) notices.show('url', refusedText(refused));
  const scheduler = createScheduler({ pe, status: $('status'), context: () => ({ pe, st: settings.state, extras, lab }) });
  const onChange = (key, value, commit) => settings.update({ [key]: value }, commit);
  const page = { views: [], controls: [] };
  let guides = null;  // built once the chapters are
  const commit = (patch) => settings.update(patch, true);
  let folds;
  try {
    folds = setupFolds(document, { state: () => settings.state, apply: commit });
  } catch (e) {
    return fail(`The explorer could not start: ${e.message}.`, 'The explorer did not start.');
  }
  const viewTitle = (id) => document.querySelector(`section[data-view="${id}"] h3`)?.textContent ?? id;
  const updateErrata = buildErrata($('errata').querySelector('ol'), viewTitle, lab);
  lab.onChange((what) => { if (what === 'shipped') updateErrata({ pe, st: settings.state, lab }); });

  // external: the settings changed under the controls (Back, a new model), not by the one in use.
  function syncAll(external = false) {
    const st = settings.state;
    for (const c of page.controls) c.sync(st, external);
    for (const v of page.views) v.sync(st, external);
    bar.sync(st, extras);
    folds.sync(st);
    updateProse(document, { pe, st, extras });
    updateErrata({ pe, st, lab });
    guides?.sync(st);
    lab.followTask(st.labTask);  // a shipped result on show follows the lab's task
    // A file or pasted config the URL names but this page has not read: say what that drops.
    if (st.model && extras.opened !== st.model) notices.show('dropped', droppedText(st.model));
    else notices.clear('dropped');
  }
  // A new model (reading: settingsFromModel's result, null for the lesson defaults): the defaults
  // plus what it says, nothing kept from the previous one. model: a file's name or 'pasted config'
  // (kept in the URL, so that a reload can say the file is gone).
  function applyModel(reading, { preset = '', name = null, label, model = '' } = {}) {
    for (const v of page.views) v.stopPlay();
    Object.assign(extras, { modelName: name, longFactors: reading?.longFactors ?? null, ropeFile: reading?.ropeFile ?? null,
      learned: reading?.learned ?? null, irope: reading ? { model: label, ...reading.irope } : null,
      clamped: reading?.clamped ?? [], modelLabel: reading ? label : null, opened: model || null });
    if (model) extras.openedModel = { clamped: extras.clamped, label };
    // The folds the reader opened stay open: they are where one reads, not what a model sets.
    settings.replace({ ...(reading?.state ?? defaults()), preset, model, deeper: settings.state.deeper });
    syncAll(true);
    scheduler.redrawAll();
  }
  // A preset in the URL brings back what the URL cannot hold (LongRoPE factors, Llama 4's NoPE
  // layers, the published values it could not show); a file read in this page keeps its own.
  function restorePreset() {
    const st = settings.state;
    const r = bar.showPreset(st.preset);
    extras.longFactors = r?.longFactors ?? null;
    extras.irope = r ? { model: r.p.name, ...r.irope } : null;
    const own = !r && st.model && extras.opened === st.model ? extras.openedModel : null;
    extras.clamped = r?.clamped ?? own?.clamped ?? [];
    extras.modelLabel = r?.p.name ?? own?.label ?? null;
  }

  const bar = createSettingsBar({ pe, presets, onChange, onModel: applyModel, redrawAll: scheduler.redrawAll });
  const goTo = setupPageLinks($('chapters'), folds.reveal);
  // A table loaded in the learned view: the page takes its size and shows it (a committed change).
  const fit = (key, v) => Math.min(FIELDS[key].max, Math.max(FIELDS[key].min, v));
  const host = {
    pe, lab, extras, onChange, state: () => settings.state, refresh: scheduler.refresh,
    // The table's file is named in the URL, so that a reload says the table is gone.
    loadLearned(t) {
      extras.learned = t;
      extras.opened = t.name;
      extras.openedModel = { clamped: [], label: `“${t.name}”` };
      settings.update({ dModel: fit('dModel', t.dModel), maxLen: fit('maxLen', t.maxLen), model: t.name, learnedSource: 'file' },
        true);
    },
  };
  const chapters = await buildChapters(defs, host);
  page.views = chapters.views;
  page.controls = [...bar.controls, ...chapters.controls];
  scheduler.track(page.views);
  guides = buildGuides(document, { pe, state: () => settings.state, apply: commit, opening: folds.opening,
    view: (id) => document.querySelector(`section[data-view="${id}"]`) });

  settings.onEdit((commit) => {
    scheduler.dragging(!commit);
    syncAll();
    scheduler.redrawAll();
  });
  settings.onHistory((refusedNow) => {
    for (const v of page.views) v.stopPlay();
    if (refusedNow.length) notices.show('url', refusedText(refusedNow));
    extras.modelName = null;
    restorePreset();
    syncAll(true);
    scheduler.redrawAll();
  });
  window.addEventListener('resize', scheduler.redrawAll);

  restorePreset();
  syncAll();
  // A link to a place in the page, from elsewhere: there, once the first views are drawn.
  if (settings.anchor) {
    const arrive = () => (document.body.dataset.ready === 'true' ? goTo(settings.anchor) : requestAnimationFrame(arrive));
    requestAnimationFrame(arrive);
  }
  window.posencExplorer = {
    pe, get state() { return settings.state; }, views: page.views,
    setMeasuredExtrapolation: (m, by) => { lab.setMeasured(m, by); scheduler.redrawAll(); },
    lab: { liveWorkers: lab.liveWorkers, get run() { return lab.run(); } },  // for the tests: workers alive, the run's state
  };
  scheduler.start();
}

main();
