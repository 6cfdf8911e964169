// The sticky settings bar (its markup is in index.html): the theme, the sizes every chapter uses
// (d_model — head_dim while a RoPE model is on the page, since that is the number it holds —,
// seq_len, heads), the model on the page — a preset, a pasted config.json or GGUF metadata, or an
// opened file — with what was read from it, and a one-line summary. Folded by default, so the lesson
// has the screen (a desktop that opens it keeps it open). The theme and the fold are not settings of
// the lesson: they live in local storage, never in a shared link.
import { buildControl } from '../page/controls.js';
import { setupModelFile } from './model-file.js';
import { describeReading, readConfig } from './model-settings.js';
import { dModelRule, evenDModel } from './rope-settings.js';
import { toHash } from './state.js';

const $ = (id) => document.getElementById(id);
const THEME_KEY = 'posenc-explorer-theme';
const FOLD_KEY = 'posenc-explorer-settings';  // 'open' or 'folded', chosen on a desktop
const DESKTOP = '(min-width: 861px)';

/**
 * The name of the number the d_model setting holds: head_dim while a RoPE model (a preset, a file
 * or a pasted config) is on the page — RoPE turns one head, and the page draws that head — else d_model.
 */
const widthName = (st) => (st.attnScheme === 'rope' && (st.preset || st.model) ? 'head_dim' : 'd_model');

const GLOBAL_CONTROLS = [
  // The slider stops only where the partial rotary set in the RoPE chapter rotates an even width;
  // a typed value that does not is refused.
  ['dModel', { label: 'd_model', labelFor: widthName,
    slider: (st) => ({ min: 1, max: 4096, log: true, snap: (v) => evenDModel(v, st.partial) }),
    validate: (v, st) => dModelRule(v, st, widthName(st)) }],
  ['seqLen', { label: 'seq_len', slider: { min: 1, max: 131072, log: true } }],
  ['heads', { label: 'heads', slider: { min: 1, max: 128, log: true } }],
];

/** The stored theme (or the system's) on the page. */
export function applyTheme() {
  const theme = localStorage.getItem(THEME_KEY) ?? 'auto';
  $('theme').value = theme;
  const dark = theme === 'dark' || (theme === 'auto' && window.matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
}

// Folding (a desktop remembers an opened bar), the bar's height (chapter links and focused plots
// scroll to just below it: --settings-height is their scroll margin), the theme.
function setupBar(redrawAll) {
  const toggle = $('settings-toggle');
  const setOpen = (open) => {
    toggle.setAttribute('aria-expanded', String(open));
    $('settings').classList.toggle('open', open);
  };
  const desktop = () => window.matchMedia(DESKTOP).matches;
  setOpen(desktop() && localStorage.getItem(FOLD_KEY) === 'open');
  toggle.addEventListener('click', () => {
    const open = toggle.getAttribute('aria-expanded') !== 'true';
    setOpen(open);
    if (desktop()) localStorage.setItem(FOLD_KEY, open ? 'open' : 'folded');
  });
  new ResizeObserver(([entry]) => {
    document.documentElement.style.setProperty('--settings-height', `${Math.ceil(entry.borderBoxSize[0].blockSize)}px`);
  }).observe($('settings'));
  $('settings').addEventListener('submit', (e) => e.preventDefault());
  $('theme').addEventListener('change', () => {
    localStorage.setItem(THEME_KEY, $('theme').value);
    applyTheme();
    redrawAll();
  });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => { applyTheme(); redrawAll(); });
}

// The model: the preset list and its layer types, the pasted config, the opened file, the message.
function setupModelChooser({ pe, presets, onModel }) {
  const select = $('preset');
  for (const p of presets.list) select.add(new Option(`${p.name} · ${p.scheme}`, p.id));
  const message = (text, bad = false) => {
    $('model-message').textContent = text;
    $('model-message').classList.toggle('bad', bad);
  };
  let choices = 0;  // a model chosen while a pasted config is still being read wins over it

  /** Shows a preset's source and config keys (r: presets.get's reading, or null). */
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
  function choosePreset(id, layerType) {
    choices += 1;
    const r = presets.get(id, layerType);
    showPreset(r);
    onModel(r, { preset: r ? id : '', label: r?.p.name });
    message(r ? describeReading(r.p.name, r) : '');
  }
  select.addEventListener('change', () => choosePreset(select.value));
  $('layer-type').addEventListener('change', () => choosePreset(select.value, $('layer-type').value));

  // A refused config marks its box and says why; the settings stay as they were.
  const box = $('config-text');
  box.setAttribute('aria-describedby', 'model-message');
  const refuse = (text) => { message(text, true); box.setAttribute('aria-invalid', 'true'); };
  $('config-apply').addEventListener('click', async () => {
    const text = box.value, dialect = $('config-dialect').value;
    let config;
    try {
      config = JSON.parse(text);
    } catch (e) {
      refuse(`Not JSON: ${e.message}. Paste the whole config.json (or GGUF metadata as a JSON object).`);
      return;
    }
    if (config === null || typeof config !== 'object' || Array.isArray(config)) {
      refuse('A config is a JSON object, { "key": value, … }: paste the whole config.json.');
      return;
    }
    const choice = ++choices;
    try {
      const r = await readConfig(pe, config, { dialect });
      if (choice !== choices) return;
      showPreset(null);
      onModel(r, { name: 'pasted config', label: 'The pasted config', model: 'pasted config' });
      message(describeReading(`Pasted config (${r.scheme})`, r));
      box.removeAttribute('aria-invalid');
    } catch (e) {
      if (choice === choices) refuse(e.message);
    }
  });
  setupModelFile(pe, {
    container: $('model-file'),
    input: $('model-file-input'),
    onModel(r, file) {
      choices += 1;
      showPreset(null);
      onModel(r, { name: file.name, label: `“${file.name}”`, model: file.name });
      message(describeReading(file.name, r));
    },
    onError: (text) => message(text, true),
  });
  return { showPreset };
}

/**
 * Builds the bar. presets: readPresets' result; onChange(key, value, commit): a control's change;
 * onModel(reading, { preset, name, label, model }): a new model (reading null: the lesson defaults;
 * name: shown in the summary, label: in the irope view, model: the file's name or 'pasted config',
 * kept in the URL); redrawAll: the colours changed.
 * Returns { controls, sync(st, extras), showPreset(id) (the preset's details, its reading) }.
 */
export function createSettingsBar({ pe, presets, onChange, onModel, redrawAll }) {
  const controls = GLOBAL_CONTROLS.map(([key, o]) => {
    const c = buildControl(key, o, onChange);
    $('global-controls').append(c.element);
    return c;
  });
  setupBar(redrawAll);
  const chooser = setupModelChooser({ pe, presets, onModel });
  return {
    controls,
    sync(st, extras) {
      const select = $('preset');
      select.value = st.preset;
      // The folds open are where one reads, not settings of the lesson.
      const unnamed = toHash({ ...st, deeper: '' }) ? 'your settings' : 'lesson defaults';
      // A file or pasted config named in the URL but not read in this page (a reload, a shared link).
      const model = st.model && (extras.opened === st.model ? st.model : `${st.model} (not open)`);
      const name = st.preset ? select.selectedOptions[0]?.textContent : model || (extras.modelName ?? unnamed);
      $('settings-summary').textContent = `${widthName(st)} ${st.dModel} · seq_len ${st.seqLen} · heads ${st.heads} · ${name}`;
    },
    showPreset(id) {
      const r = presets.get(id);
      chooser.showPreset(r);
      return r;
    },
  };
}
