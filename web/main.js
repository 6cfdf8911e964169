// The explorer's entry: loads the package (and the view modules, at the same time), reads the
// presets, then puts the page's parts together — the settings and the URL (settings.js), the
// settings bar (settings-bar.js), the chapters and their views
// (chapters.js, view.js, views/), the "go deeper" folds (folds.js), the guided steps (guide.js),
// the prose that follows the settings (prose.js), the errata (errata.js), the notices for what the
// page could not do as asked (notices.js), the redraws (scheduler.js) — and keeps them in step. This file holds no maths: views compute with the
// posenc package.
import { init } from '../dist/browser.js';
import { buildChapters, loadViews } from './page/chapters.js';
import { buildErrata } from './page/errata.js';
import { setupFolds } from './page/folds.js';
import { buildGuides } from './page/guide.js';
import { createLab } from './lab/lab.js';
import { createNotices, droppedText, refusedText } from './page/notices.js';
import { createPin, setupPageLinks } from './page/page-links.js';
import { updateProse } from './page/prose.js';
import { readPresets } from './settings/presets.js';
import { createOffload } from './page/offload.js';
import { createScheduler } from './page/scheduler.js';
import { applyTheme, createSettingsBar } from './settings/settings-bar.js';
import { createSettings } from './settings/settings.js';
import { FIELDS, defaults } from './settings/state.js';

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

// The page's parts, as main() puts them together: { pe, lab, settings, extras, notices, scheduler,
// views, controls, bar, folds, guides, updateErrata }.

// Every part shown again from the settings. external: the settings changed under the controls
// (Back, a new model), not by the one in use.
function syncAll(page, external = false) {
  const { pe, lab, settings, extras, notices } = page;
  const st = settings.state;
  for (const c of page.controls) c.sync(st, external);
  for (const v of page.views) v.sync(st, external);
  page.bar.sync(st, extras);
  page.folds.sync(st);
  updateProse(document, { pe, st, extras });
  page.updateErrata({ pe, st, lab });
  page.guides?.sync(st);
  lab.followTask(st.labTask);  // a shipped result on show follows the lab's task
  // A file or pasted config the URL names but this page has not read: say what that drops.
  if (st.model && extras.opened !== st.model) notices.show('dropped', droppedText(st.model));
  else notices.clear('dropped');
}

// A new model (reading: settingsFromModel's result, null for the lesson defaults): the defaults
// plus what it says, nothing kept from the previous one. model: a file's name or 'pasted config'
// (kept in the URL, so that a reload can say the file is gone).
function applyModel(page, reading, { preset = '', name = null, label, model = '' } = {}) {
  const { settings, extras } = page;
  for (const v of page.views) v.stopPlay();
  Object.assign(extras, { modelName: name, longFactors: reading?.longFactors ?? null, ropeFile: reading?.ropeFile ?? null,
    learned: reading?.learned ?? null, irope: reading ? { model: label, ...reading.irope } : null,
    clamped: reading?.clamped ?? [], modelLabel: reading ? label : null, modelScheme: reading?.scheme ?? null,
    opened: model || null });
  if (model) extras.openedModel = { clamped: extras.clamped, label, scheme: extras.modelScheme };
  // The folds the reader opened stay open: they are where one reads, not what a model sets.
  settings.replace({ ...(reading?.state ?? defaults()), preset, model, deeper: settings.state.deeper });
  syncAll(page, true);
  page.scheduler.redrawAll();
}

// A preset in the URL brings back what the URL cannot hold (LongRoPE factors, Llama 4's NoPE
// layers, the published values it could not show); a file read in this page keeps its own.
function restorePreset(page) {
  const { settings, extras } = page;
  const st = settings.state;
  const r = page.bar.showPreset(st.preset);
  extras.longFactors = r?.longFactors ?? null;
  extras.irope = r ? { model: r.p.name, ...r.irope } : null;
  const own = !r && st.model && extras.opened === st.model ? extras.openedModel : null;
  extras.clamped = r?.clamped ?? own?.clamped ?? [];
  extras.modelLabel = r?.p.name ?? own?.label ?? null;
  extras.modelScheme = r?.scheme ?? own?.scheme ?? null;  // the model's own, whatever a view's menu shows
}

// What the views get (view.js): the package, the lab, the settings and a way to change them.
function viewHost(page) {
  const { pe, lab, settings, extras } = page;
  const onChange = (key, value, commit) => settings.update({ [key]: value }, commit);
  // A table loaded in the learned view: the page takes its size and shows it (a committed change).
  const fit = (key, v) => Math.min(FIELDS[key].max, Math.max(FIELDS[key].min, v));
  return {
    pe, lab, extras, onChange, state: () => settings.state, refresh: page.scheduler.refresh,
    // The table's file is named in the URL, so that a reload says the table is gone.
    loadLearned(t) {
      extras.learned = t;
      extras.opened = t.name;
      extras.openedModel = { clamped: [], label: `“${t.name}”`, scheme: 'learned' };
      settings.update({ dModel: fit('dModel', t.dModel), maxLen: fit('maxLen', t.maxLen), model: t.name, learnedSource: 'file' },
        true);
    },
  };
}

// The settings from the URL, the preset it names taken as the base; what the URL asked for and the
// page refused is said once, the URL already corrected.
function readSettings(presets, notices) {
  // A link names a preset and what differs from it: its other keys take the preset's settings.
  const baseOf = (id) => {
    const r = id ? presets.get(id) : null;
    return r ? { ...r.state, preset: id, model: '' } : defaults();
  };
  const settings = createSettings({ baseOf });
  const refused = [...settings.refused];
  if (settings.state.preset && !presets.get(settings.state.preset)) {
    refused.push({ key: 'preset', text: settings.state.preset, why: 'no model in the list has that id' });
    settings.refuse({ preset: '' });
  }
  if (refused.length) notices.show('url', refusedText(refused));
  return settings;
}

// Edits, Back/Forward and resizes redraw the page; a link to a place in the page arrives there
// once the first views are drawn.
function listen(page, goTo) {
  const { settings, scheduler, notices, extras } = page;
  settings.onEdit((commit) => {
    scheduler.dragging(!commit);
    syncAll(page);
    scheduler.redrawAll();
  });
  settings.onHistory((refusedNow) => {
    for (const v of page.views) v.stopPlay();
    if (refusedNow.length) notices.show('url', refusedText(refusedNow));
    extras.modelName = null;
    restorePreset(page);
    syncAll(page, true);
    scheduler.redrawAll();
  });
  window.addEventListener('resize', scheduler.redrawAll);
  if (settings.anchor) {
    const arrive = () => (document.body.dataset.ready === 'true' ? goTo(settings.anchor) : requestAnimationFrame(arrive));
    requestAnimationFrame(arrive);
  }
}

async function main() {
  applyTheme();
  const lab = createLab();
  const loaded = await load(lab);
  if (!loaded) return;
  const { pe, defs, presets } = loaded;
  const notices = createNotices($('notices'));
  const settings = readSettings(presets, notices);
  const { extras } = settings;
  const offload = createOffload((id) => scheduler.refresh(id));
  const scheduler = createScheduler({ pe, status: $('status'), context: () => ({ pe, st: settings.state, extras, lab, offload }) });
  const page = { pe, lab, settings, extras, notices, scheduler, views: [], controls: [], guides: null };
  const commit = (patch) => settings.update(patch, true);
  try {
    page.folds = setupFolds(document, { state: () => settings.state, apply: commit });
  } catch (e) {
    return fail(`The explorer could not start: ${e.message}.`, 'The explorer did not start.');
  }
  const viewTitle = (id) => document.querySelector(`section[data-view="${id}"] h3`)?.textContent ?? id;
  page.updateErrata = buildErrata($('errata').querySelector('ol'), viewTitle, lab);
  lab.onChange((what) => { if (what === 'shipped') page.updateErrata({ pe, st: settings.state, lab }); });
  const host = viewHost(page);
  page.bar = createSettingsBar({ pe, presets, onChange: host.onChange, onModel: (...a) => applyModel(page, ...a),
    redrawAll: scheduler.redrawAll });
  const pin = createPin($('chapters'));
  const goTo = setupPageLinks(pin, page.folds.reveal);
  const chapters = await buildChapters(defs, host);
  page.views = chapters.views;
  page.controls = [...page.bar.controls, ...chapters.controls];
  scheduler.track(page.views);
  page.guides = buildGuides(document, { pe, state: () => settings.state, apply: commit, opening: page.folds.opening,
    view: (id) => document.querySelector(`section[data-view="${id}"]`), pin });
  listen(page, goTo);
  restorePreset(page);
  syncAll(page);
  window.posencExplorer = {
    pe, get state() { return settings.state; }, views: page.views,
    setMeasuredExtrapolation: (m, by) => { lab.setMeasured(m, by); scheduler.redrawAll(); },
    lab: { liveWorkers: lab.liveWorkers, get run() { return lab.run(); } },  // for the tests: workers alive, the run's state
  };
  scheduler.start();
}

main();
