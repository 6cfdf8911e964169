// The explorer: loads the package, builds the settings bar and the chapters, keeps the URL and
// the history in step with the settings, and schedules redraws so that nothing blocks the page.
// This file holds no maths: views compute with the posenc package (web/views/).
import { init } from '../dist/browser.js';
import { CHAPTERS } from './chapters.js';
import { readConfig } from './config.js';
import { buildControl } from './controls.js';
import { hasReadModel, setupModelFile } from './model-file.js';
import { FIELDS, fromHash, toHash } from './state.js';
import { createView } from './view.js';
import { setMeasuredExtrapolation } from './views/comparison-table.js';
import { currentRun, liveWorkers, loadShipped } from './lab.js';

const $ = (id) => document.getElementById(id);
const FRAME_BUDGET = 10;   // ms of redraw work per animation frame before the rest waits a frame
const HEAVY = 30;          // ms: a view this slow is redrawn only once a drag pauses
const SETTLE = 180;        // ms without a drag step that count as a pause
const THEME_KEY = 'posenc-explorer-theme';

const GLOBAL_CONTROLS = [
  ['dModel', { label: 'd_model', slider: { min: 1, max: 4096, log: true } }],
  ['seqLen', { label: 'seq_len', slider: { min: 1, max: 131072, log: true } }],
  ['heads', { label: 'heads', slider: { min: 1, max: 128, log: true } }],
];

function applyTheme() {
  const theme = localStorage.getItem(THEME_KEY) ?? 'auto';
  $('theme').value = theme;
  const dark = theme === 'dark' || (theme === 'auto' && window.matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
}

async function main() {
  applyTheme();
  let pe;
  const shipped = loadShipped();  // the lab's shipped result, fetched while the module loads
  try {
    // Threads when the page is cross-origin isolated (scripts/serve.mjs sends COOP/COEP), else one.
    pe = await init({ threads: Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1)) });
    await shipped;
  } catch (e) {
    $('error').textContent = `The posenc WebAssembly module failed to load: ${e.message}. The explorer needs a browser with WebAssembly SIMD.`;
    $('error').hidden = false;
    $('status').textContent = 'WebAssembly module not loaded.';
    document.body.dataset.ready = 'error';
    return;
  }

  let st = fromHash(location.hash);
  const extras = { longFactors: null, ropeFile: null, learned: null, modelName: null, irope: null };
  const views = [];
  const controls = [];
  const onChange = (key, value, commit) => update({ [key]: value }, commit);

  // ---- settings bar -----------------------------------------------------------------------------
  for (const [key, o] of GLOBAL_CONTROLS) {
    const c = buildControl(key, o, onChange);
    $('global-controls').append(c.element);
    controls.push(c);
  }
  const toggle = $('settings-toggle');
  const setOpen = (open) => { toggle.setAttribute('aria-expanded', String(open)); $('settings').classList.toggle('open', open); };
  setOpen(window.matchMedia('(min-width: 861px)').matches);
  // In-page links (contents, skip link) scroll and move the focus without touching the URL's hash:
  // the hash holds the settings, and a fragment there would reset them to the defaults.
  let pinned = null;  // { target, until }: the link target kept in place while views above it draw
  document.addEventListener('click', (e) => {
    const a = e.target.closest('a[href^="#"]');
    if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const target = document.getElementById(a.getAttribute('href').slice(1));
    if (!target) return;
    e.preventDefault();
    target.scrollIntoView({ block: 'start' });
    if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
    target.focus({ preventScroll: true });
    // Views drawn after the jump change the height of the chapters above: keep the target in place
    // for a few seconds, until the reader scrolls or types.
    pinned = { target, until: performance.now() + 4000 };
  });
  new ResizeObserver(() => {
    if (pinned && performance.now() < pinned.until) pinned.target.scrollIntoView({ block: 'start' });
  }).observe($('chapters'));
  for (const type of ['wheel', 'touchstart', 'keydown', 'mousedown']) window.addEventListener(type, () => { pinned = null; }, { passive: true });
  // A chapter link scrolls its heading to just below the sticky bar, whatever the bar's height.
  new ResizeObserver(([entry]) => {
    document.documentElement.style.setProperty('--settings-height', `${Math.ceil(entry.borderBoxSize[0].blockSize)}px`);
  }).observe($('settings'));
  toggle.addEventListener('click', () => setOpen(toggle.getAttribute('aria-expanded') !== 'true'));
  $('theme').addEventListener('change', () => {
    localStorage.setItem(THEME_KEY, $('theme').value);
    applyTheme();
    redrawAll();
  });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => { applyTheme(); redrawAll(); });

  const presetSelect = $('preset');
  for (const p of pe.presets.presets) presetSelect.add(new Option(`${p.name} · ${p.scheme}`, p.id));
  const message = (text, bad = false) => { $('model-message').textContent = text; $('model-message').classList.toggle('bad', bad); };

  function presetReading(id, layerType) {
    const p = pe.presets.presets.find((x) => x.id === id);
    if (!p) return null;
    const lt = p.layerTypes ? (layerType ?? p.layerTypes[0]) : undefined;
    return { p, lt, ...readConfig(pe, p.config, { hint: p.scheme, layerType: lt }) };
  }
  function showPreset(r) {
    $('preset-details').hidden = !r;
    $('layer-type-label').hidden = !(r && r.p.layerTypes);
    if (!r) return;
    $('preset-source').textContent = `Source: ${r.p.source}`;
    $('preset-config').textContent = JSON.stringify(r.p.config, null, 2);
    if (r.p.layerTypes) {
      $('layer-type').replaceChildren(...r.p.layerTypes.map((t) => new Option(t, t)));
      $('layer-type').value = r.lt;
    }
  }
  // Llama 4's NoPE layers in the model on the page, for the irope view: readModel's irope (which
  // layers use RoPE), read from a preset's or a pasted config (asynchronously: the view says so
  // meanwhile) or given by an opened file. extras.irope: null (no model) or { model: its name,
  // config (the object read), pending, info: readModel's irope or null, given: what the config's
  // no_rope_layers is, 'list' | 'empty' | 'absent' (undefined for a file), interval }.
  let iropeReads = 0;  // a newer model makes older readings stale
  function setIrope(model, { config = null, info = null } = {}) {
    if (model && config && extras.irope?.config === config) return;  // the same model (Back within it): its reading stands
    const token = ++iropeReads;
    if (!model) { extras.irope = null; return; }
    if (!config || !hasReadModel(pe)) { extras.irope = { model, info }; return; }
    const c = config.text_config ?? config;
    const list = c.no_rope_layers;
    const given = Array.isArray(list) ? (list.length ? 'list' : 'empty') : 'absent';
    extras.irope = { model, config, pending: true, info: null, given, interval: c.no_rope_layer_interval };
    const done = (irope) => {
      if (token !== iropeReads) return;
      extras.irope = { ...extras.irope, pending: false, info: irope ?? null };
      host.refresh('irope');
    };
    pe.readModel(config).then((m) => done(m.irope), () => done(null));
  }
  // A new model: the defaults plus what it says, nothing kept from the previous one.
  function applyModel(r, preset = '', name = null, config = null) {
    for (const v of views) v.stopPlay();
    extras.modelName = name;
    extras.longFactors = r.longFactors ?? null;
    extras.ropeFile = r.ropeFile ?? null;
    extras.learned = r.learned ?? null;
    extras.irope = null;
    setIrope(r.p?.name ?? (config ? 'The pasted config' : name && `“${name}”`), { config, info: r.irope ?? null });
    st = { ...r.state, preset };
    commitUrl(true);
    syncAll(true);
    redrawAll();
  }
  function choosePreset(id, layerType) {
    const r = presetReading(id, layerType);
    showPreset(r);
    if (!r) { applyModel({ state: fromHash('') }); message(''); return; }
    applyModel(r, id, null, r.p.config);
    message(`${r.p.name}: read ${r.read.join(', ')}.`);
  }
  presetSelect.addEventListener('change', () => choosePreset(presetSelect.value));
  $('layer-type').addEventListener('change', () => choosePreset(presetSelect.value, $('layer-type').value));

  $('config-apply').addEventListener('click', () => {
    const text = $('config-text').value, dialect = $('config-dialect').value;
    let config;
    try {
      config = JSON.parse(text);
    } catch (e) {
      message(`Not JSON: ${e.message}. Paste the whole config.json (or GGUF metadata as a JSON object).`, true);
      return;
    }
    if (config === null || typeof config !== 'object' || Array.isArray(config)) {
      message('A config is a JSON object, { "key": value, … }: paste the whole config.json.', true);
      return;
    }
    try {
      const r = readConfig(pe, config, { dialect });
      showPreset(null);
      applyModel(r, '', 'pasted config', dialect === 'hf' ? config : null);
      message(`Pasted config (${r.scheme}): read ${r.read.join(', ')}.`);
    } catch (e) {
      message(e.message, true);
    }
  });
  setupModelFile(pe, {
    container: $('model-file'),
    input: $('model-file-input'),
    onModel(r, file) {
      showPreset(null);
      applyModel(r, '', file.name);
      message(`${file.name}: read ${r.read.join('; ')}.${r.warnings.length ? ` Warnings: ${r.warnings.join('; ')}` : ''}`);
    },
    onError: (text) => message(text, true),
  });

  // ---- chapters and views -------------------------------------------------------------------------
  // A table loaded in the learned view: the page takes its size (a committed change).
  const fit = (key, v) => Math.min(FIELDS[key].max, Math.max(FIELDS[key].min, v));
  let started = false;  // views may ask for redraws while they are being built: the first schedule() draws them
  const host = {
    pe, state: () => st, extras, onChange,
    loadLearned(t) { extras.learned = t; update({ dModel: fit('dModel', t.dModel), maxLen: fit('maxLen', t.maxLen) }, true); },
    // A view whose data changed outside the settings (the lab's runs): redraw it when visible.
    refresh(id) { const v = views.find((x) => x.def.id === id); if (v) { v.dirty = true; if (started) schedule(); } },
  };
  const observer = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const v = views.find((x) => x.section === e.target);
      v.visible = e.isIntersecting;
      if (v.visible && v.dirty) schedule();
    }
  }, { rootMargin: '50px' });
  for (const chapter of CHAPTERS) {
    const section = document.querySelector(`section[data-chapter="${chapter.name}"]`);
    const box = section.querySelector('.views');
    if (chapter.controls?.length) {
      const bar = document.createElement('div');
      bar.className = 'chapter-controls';
      bar.setAttribute('aria-label', `${chapter.name} settings`);
      for (const [key, o] of chapter.controls) {
        const c = buildControl(key, o, onChange);
        bar.append(c.element);
        controls.push(c);
      }
      box.before(bar);
    }
    for (const def of chapter.views) {
      const v = createView(def, box, host);
      views.push(v);
      observer.observe(v.section);
    }
  }

  // external: the settings changed under the controls (Back, a new model), not by the one in use.
  function syncAll(external = false) {
    for (const c of controls) c.sync(st, external);
    for (const v of views) v.sync(st, external);
    presetSelect.value = st.preset;
    const name = st.preset ? presetSelect.selectedOptions[0]?.textContent : extras.modelName ?? (toHash(st) ? 'your settings' : 'lesson defaults');
    $('settings-summary').textContent = `d_model ${st.dModel} · seq_len ${st.seqLen} · heads ${st.heads} · ${name}`;
  }

  // ---- redraws ------------------------------------------------------------------------------------
  let memoTable = new Map();
  const memo = (key, fn) => { if (!memoTable.has(key)) memoTable.set(key, fn()); return memoTable.get(key); };
  let frame = 0, dragging = false, settleTimer = 0;
  function schedule() {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      const t0 = performance.now();
      performance.mark('frame-start');
      memoTable = new Map();
      let more = false, drawn = 0;
      for (const v of views) {
        if (!v.dirty || !v.visible) continue;
        if (dragging && v.cost > HEAVY) continue;  // the settle timer brings it back
        if (drawn > 0 && performance.now() - t0 > FRAME_BUDGET) { more = true; continue; }
        v.render({ pe, st, extras, memo });
        drawn += 1;
      }
      for (const v of views) v.section.classList.toggle('stale', v.dirty && v.visible);
      performance.mark('frame-end');
      if (drawn) performance.measure('frame', 'frame-start', 'frame-end');  // one redraw step of the visible views
      const s = views.filter((v) => v.visible && !v.dirty).length;
      $('status').textContent = `SIMD: ${pe.simdArch} · threads: ${pe.threads} · ${s} visible views drawn, the last step in ${(performance.now() - t0).toFixed(1)} ms`;
      if (more) schedule();
      else document.body.dataset.ready = 'true';
    });
  }
  function redrawAll() {
    for (const v of views) v.dirty = true;
    schedule();
  }

  // ---- URL and history ----------------------------------------------------------------------------
  // One history entry per committed change: the first step of a drag or of typing pushes an entry,
  // later steps replace it (at most every 250 ms: browsers throttle rapid URL writes), and the
  // commit finishes it. Back then undoes the whole change.
  // `live` says the current entry is still open (a change in progress). At most one delayed write is
  // pending, and a commit, a new model or Back cancels it: a delayed write left over from the change
  // just committed would reopen its entry, and the next change would then overwrite it instead of
  // pushing its own (two typed values, one entry: issue 20).
  let live = false, urlTimer = 0;
  function cancelUrlWrite() {
    clearTimeout(urlTimer);
    urlTimer = 0;
  }
  function commitUrl(commit) {
    cancelUrlWrite();
    const hash = toHash(st);
    const same = hash === location.hash || (hash === '' && location.hash === '');
    const url = hash || `${location.pathname}${location.search}`;
    if (!live && !same) history.pushState(null, '', url);
    else if (!same) history.replaceState(null, '', url);
    live = !commit;
  }
  function update(patch, commit) {
    st = { ...st, ...patch };
    if (commit || !live) commitUrl(commit);
    else if (!urlTimer) urlTimer = setTimeout(() => { urlTimer = 0; commitUrl(false); }, 250);  // writes the latest st
    dragging = !commit;
    clearTimeout(settleTimer);
    if (dragging) settleTimer = setTimeout(() => { dragging = false; schedule(); }, SETTLE);
    syncAll();
    redrawAll();
  }
  window.addEventListener('popstate', () => {
    cancelUrlWrite();
    live = false;
    for (const v of views) v.stopPlay();
    extras.modelName = null;
    st = fromHash(location.hash);
    restorePreset();
    syncAll(true);
    redrawAll();
  });
  window.addEventListener('resize', redrawAll);

  // A model in the URL brings back what the URL cannot hold (LongRoPE factors, Llama 4's NoPE layers).
  function restorePreset() {
    const r = presetReading(st.preset);
    showPreset(r);
    extras.longFactors = r?.longFactors ?? null;
    setIrope(r?.p.name, { config: r?.p.config });
  }
  restorePreset();
  syncAll();
  $('settings').addEventListener('submit', (e) => e.preventDefault());
  window.posencExplorer = {
    pe, get state() { return st; }, views, setMeasuredExtrapolation: (m, by) => { setMeasuredExtrapolation(m, by); redrawAll(); },
    lab: { liveWorkers, get run() { return currentRun(); } },  // for the tests: workers alive, the run's state
  };
  started = true;
  schedule();
}

main();
