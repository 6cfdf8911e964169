// The explorer: wires controls, the URL hash and the views together. Views compute with the
// posenc package (views.js) and draw with plot.js; this file holds no maths.
import { init } from '../dist/browser.js';
import { drawHeatmap, drawLines, themeColors } from './plot.js';
import { FIELDS, SCALINGS, fromHash, parseField, toHash } from './state.js';
import { VIEWS, moveCursor } from './views.js';

const $ = (id) => document.getElementById(id);

// ---- controls ---------------------------------------------------------------------------------------

// Sliders: `log` ones map 0 … 1000 to [min, max] geometrically.
const CONTROLS = [
  ['Sizes', [
    ['dModel', 'd_model / head_dim', { slider: { min: 2, max: 4096, log: true } }],
    ['seqLen', 'seq_len', { slider: { min: 1, max: 131072, log: true } }],
    ['heads', 'heads', { slider: { min: 1, max: 128, log: true } }],
  ]],
  ['Sinusoidal', [
    ['base', 'base θ', { slider: { min: 2, max: 1e7, log: true }, step: 'any' }],
    ['sinLayout', 'layout', { select: ['interleaved', 'concat'] }],
    ['dims', 'traces (dims)', { text: true }],
  ]],
  ['RoPE', [
    ['scaling', 'scaling', { select: SCALINGS }],
    ['lTrain', 'L_train', { slider: { min: 16, max: 1048576, log: true } }],
    ['lTarget', 'L_target', { slider: { min: 16, max: 4194304, log: true } }],
    ['layout', 'pair layout', { select: ['halfSplit', 'interleaved'] }],
    ['partial', 'partial rotary', { slider: { min: 0.05, max: 1 }, step: 'any' }],
    ['precision', 'precision', { select: ['fast', 'accurate'] }],
    ['betaFast', 'YaRN β_fast', { step: 'any' }],
    ['betaSlow', 'YaRN β_slow', { step: 'any' }],
    ['truncate', 'YaRN truncate', { checkbox: true }],
    ['lowFreq', 'llama3 low_freq_factor', { step: 'any' }],
    ['highFreq', 'llama3 high_freq_factor', { step: 'any' }],
    ['pos', 'clock position', { slider: { min: 0, max: 1048576, log: true } }],
    ['compare', 'compare with', { select: SCALINGS }],
  ]],
  ['ALiBi and T5', [
    ['maxBias', 'ALiBi max bias', { step: 'any' }],
    ['t5Buckets', 'T5 buckets', {}],
    ['t5MaxDist', 'T5 max distance', {}],
    ['t5Bidir', 'T5 bidirectional', { checkbox: true }],
  ]],
];
const SCHEMES = ['sinusoidal', 'rope', 'alibi', 't5'];

function sliderToValue(s, t) {
  return s.log ? s.min * (s.max / s.min) ** (t / 1000) : s.min + ((s.max - s.min) * t) / 1000;
}
function valueToSlider(s, v) {
  const t = s.log ? (Math.log(v / s.min) / Math.log(s.max / s.min)) * 1000 : ((v - s.min) / (s.max - s.min)) * 1000;
  return Math.max(0, Math.min(1000, Math.round(t)));
}

function buildControls(form, onChange) {
  const inputs = {};
  const before = $('model-fieldset');
  for (const [legend, items] of CONTROLS) {
    const fs = document.createElement('fieldset');
    fs.innerHTML = `<legend>${legend}</legend>`;
    for (const [key, label, o] of items) {
      const f = FIELDS[key];
      const wrap = document.createElement('label');
      wrap.className = 'control';
      wrap.append(`${label} `);
      let input;
      if (o.select) {
        input = document.createElement('select');
        for (const v of o.select) input.add(new Option(v, v));
      } else if (o.checkbox) {
        input = document.createElement('input');
        input.type = 'checkbox';
      } else if (o.text) {
        input = document.createElement('input');
        input.type = 'text';
        input.size = 12;
      } else {
        input = document.createElement('input');
        input.type = 'number';
        input.min = f.min;
        input.max = f.max;
        input.step = o.step ?? (f.even ? 2 : 1);
        input.required = true;
        if (o.slider) {
          const range = document.createElement('input');
          range.type = 'range';
          range.min = 0;
          range.max = 1000;
          range.setAttribute('aria-label', `${label} slider`);
          range.dataset.for = key;
          range.addEventListener('input', () => {
            let v = sliderToValue(o.slider, range.valueAsNumber);
            v = f.type === 'int' ? Math.round(v) : +v.toPrecision(4);
            if (f.even) v = Math.max(f.min, v - (v % 2));
            input.value = String(v);
            onChange(key, v, false);
          });
          range.addEventListener('change', () => onChange(key, Number(input.value), true));
          wrap.append(range, ' ');
          inputs[`${key}:slider`] = { range, slider: o.slider };
        }
      }
      input.name = key;
      input.id = `control-${key}`;
      input.addEventListener(o.select || o.checkbox ? 'change' : 'input', () => {
        const raw = o.checkbox ? (input.checked ? '1' : '0') : input.value;
        const v = parseField(key, raw);
        input.setCustomValidity(v === undefined ? `${label}: ${describeRule(f)}` : '');
        if (v !== undefined) onChange(key, v, o.select || o.checkbox);
      });
      input.addEventListener('change', () => {
        const v = parseField(key, o.checkbox ? (input.checked ? '1' : '0') : input.value);
        if (v !== undefined) onChange(key, v, true);
      });
      wrap.append(input);
      fs.append(wrap);
      inputs[key] = input;
    }
    form.insertBefore(fs, before);
  }
  const fs = document.createElement('fieldset');
  fs.innerHTML = '<legend>Schemes compared in “score against distance”</legend>';
  for (const s of SCHEMES) {
    const wrap = document.createElement('label');
    wrap.className = 'control';
    const cb = document.createElement('input');
    cb.type = 'checkbox';
    cb.name = `scheme-${s}`;
    cb.addEventListener('change', () => {
      const on = SCHEMES.filter((x) => form.elements[`scheme-${x}`].checked);
      onChange('schemes', on.join(','), true);
    });
    wrap.append(cb, ` ${s}`);
    fs.append(wrap);
  }
  form.insertBefore(fs, before);
  return inputs;
}

function describeRule(f) {
  if (f.type === 'int') return `a whole number in [${f.min}, ${f.max}]${f.even ? ', even' : ''}`;
  if (f.type === 'num') return `a number in [${f.min}, ${f.max}]`;
  return 'a valid value';
}

function syncControls(inputs, form, st) {
  for (const key of Object.keys(FIELDS)) {
    const input = inputs[key];
    if (input) {
      if (input.type === 'checkbox') input.checked = st[key];
      else if (document.activeElement !== input) input.value = String(st[key]);
      input.setCustomValidity('');
    }
    const slider = inputs[`${key}:slider`];
    if (slider && document.activeElement !== slider.range) slider.range.value = String(valueToSlider(slider.slider, st[key]));
  }
  for (const s of SCHEMES) form.elements[`scheme-${s}`].checked = st.schemes.split(',').includes(s);
  $('theme').value = st.theme;
  const dark = st.theme === 'dark' || (st.theme === 'auto' && window.matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  // Only the parameters of the chosen scaling are relevant.
  const show = { betaFast: 'yarn', betaSlow: 'yarn', truncate: 'yarn', lowFreq: 'llama3', highFreq: 'llama3' };
  for (const [key, scaling] of Object.entries(show)) inputs[key].closest('label').classList.toggle('dim', st.scaling !== scaling);
}

// ---- views ------------------------------------------------------------------------------------------

function buildView(view) {
  const section = document.createElement('section');
  section.dataset.view = view.id;
  section.setAttribute('aria-labelledby', `${view.id}-title`);
  section.innerHTML = `
    <h2 id="${view.id}-title">${view.title}</h2>
    <p class="explain">${view.explain}</p>
    <figure>
      <canvas tabindex="0" role="img" aria-label="${view.title}. Arrow keys move the cursor; the read-out below gives the exact value."></canvas>
      <figcaption><output class="readout" aria-live="polite">Hover, or focus and use the arrow keys, for exact values.</output></figcaption>
    </figure>
    <div class="actions">
      <button type="button" data-export="png1">PNG 1×</button>
      <button type="button" data-export="png2">PNG 2×</button>
      <button type="button" data-export="csv">CSV</button>
      <details class="table"><summary>Show data table</summary><div class="table-body"></div></details>
    </div>`;
  return section;
}

function drawInto(ctx, width, height, plot, colors) {
  if (plot.kind === 'heatmap') return drawHeatmap(ctx, width, height, plot.spec, colors);
  if (plot.kind === 'lines') return drawLines(ctx, width, height, plot.spec, colors);
  return plot.spec.draw(ctx, width, height, plot.spec, colors);
}

function download(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

function csvTable(csv, limit = 200) {
  const lines = csv.trim().split('\n');
  const esc = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const head = lines[0].split(',').map((h) => `<th scope="col">${esc(h)}</th>`).join('');
  const rows = lines.slice(1, limit + 1).map((l) => `<tr>${l.split(',').map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('');
  const more = lines.length - 1 > limit ? `<p>First ${limit} of ${lines.length - 1} rows; the CSV has them all.</p>` : '';
  return `<table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>${more}`;
}

// ---- the page -------------------------------------------------------------------------------------

async function main() {
  let pe;
  try {
    pe = await init();
  } catch (e) {
    $('error').textContent = `The posenc WebAssembly module failed to load: ${e.message}. The explorer needs a browser with WebAssembly SIMD.`;
    $('error').hidden = false;
    $('status').textContent = 'WebAssembly module not loaded.';
    document.body.dataset.ready = 'error';
    return;
  }

  let st = fromHash(location.hash);
  const extras = { longFactors: null };
  const form = $('controls');
  const inputs = buildControls(form, (key, value, commit) => update({ [key]: value }, commit));
  const viewState = new Map();  // id → { section, canvas, readout, data, layout, cursor, dirty, visible }

  // Presets.
  const presetSelect = $('preset');
  for (const p of pe.presets.presets) presetSelect.add(new Option(`${p.name} (${p.scheme})`, p.id));
  presetSelect.addEventListener('change', () => applyPreset(presetSelect.value, $('layer-type').value || undefined));
  $('layer-type').addEventListener('change', () => applyPreset(presetSelect.value, $('layer-type').value));

  function ropeSettings(params, layout) {
    const s = params.scaling ?? { type: 'none' };
    const next = { dModel: params.headDim - (params.headDim % 2), base: params.theta, partial: params.partialRotaryFactor ?? 1, scaling: SCALINGS.includes(s.type) ? s.type : 'none' };
    if (params.rotaryDim) next.partial = params.rotaryDim / params.headDim;
    if (layout) next.layout = layout;
    const orig = s.originalMaxPositionEmbeddings ?? (s.type === 'dynamic' ? s.maxPositionEmbeddings : undefined);
    if (orig) next.lTrain = orig;
    if (s.factor && next.lTrain) next.lTarget = Math.round(next.lTrain * s.factor);
    else if (s.maxPositionEmbeddings) next.lTarget = s.maxPositionEmbeddings;
    if (s.type === 'yarn') Object.assign(next, { betaFast: s.betaFast, betaSlow: s.betaSlow, truncate: s.truncate });
    if (s.type === 'llama3') Object.assign(next, { lowFreq: s.lowFreqFactor, highFreq: s.highFreqFactor });
    extras.longFactors = s.type === 'longrope' ? { shortFactor: s.shortFactor, longFactor: s.longFactor } : null;
    return next;
  }

  function applyPreset(id, layerType) {
    const p = pe.presets.presets.find((x) => x.id === id);
    $('preset-details').hidden = !p;
    $('layer-type-label').hidden = !(p && p.layerTypes);
    if (!p) { update({ preset: '' }, true); return; }
    $('preset-source').textContent = `Source: ${p.source}`;
    $('preset-config').textContent = JSON.stringify(p.config, null, 2);
    if (p.layerTypes) {
      const lt = $('layer-type');
      if (lt.options.length !== p.layerTypes.length || lt.options[0].value !== p.layerTypes[0]) {
        lt.replaceChildren(...p.layerTypes.map((t) => new Option(t, t)));
      }
      if (layerType) lt.value = layerType;
    }
    const c = p.config.text_config ?? p.config;
    let next = { preset: id };
    if (p.scheme === 'rope') {
      next = { ...next, ...ropeSettings(pe.ropeParamsFromConfig(p.config, { layerType: p.layerTypes ? $('layer-type').value : '' }), p.layout) };
      next.heads = Math.min(128, c.num_attention_heads ?? st.heads);
      next.schemes = 'sinusoidal,rope,alibi,t5';
    } else if (p.scheme === 'learned') {
      next = { ...next, dModel: c.n_embd ?? c.hidden_size, seqLen: c.n_positions ?? c.max_position_embeddings, heads: c.n_head ?? c.num_attention_heads };
    } else if (p.scheme === 'alibi') {
      next = { ...next, heads: c.n_head ?? c.n_heads, maxBias: c.attn_config?.alibi_bias_max ?? 8, schemes: 'alibi', dModel: c.hidden_size ?? c.d_model };
    } else if (p.scheme === 't5') {
      next = { ...next, heads: c.num_heads, t5Buckets: c.relative_attention_num_buckets, t5MaxDist: c.relative_attention_max_distance, schemes: 't5', dModel: c.d_model };
    }
    update(next, true);
  }

  $('config-apply').addEventListener('click', () => {
    const msg = $('config-message');
    try {
      const params = pe.ropeParamsFromConfig($('config-text').value, { dialect: $('config-dialect').value });
      update({ preset: '', ...ropeSettings(params) }, true);
      msg.textContent = `Read: head_dim ${params.headDim}, θ ${params.theta}, scaling ${params.scaling?.type ?? 'none'}.`;
      msg.classList.remove('bad');
    } catch (e) {
      msg.textContent = e.message;
      msg.classList.add('bad');
    }
  });
  $('theme').addEventListener('change', () => update({ theme: $('theme').value }, true));

  // Views.
  const container = $('views');
  const observer = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const v = viewState.get(e.target.dataset.view);
      v.visible = e.isIntersecting;
      if (v.visible && v.dirty) schedule();
    }
  }, { rootMargin: '200px' });
  for (const view of VIEWS) {
    const section = buildView(view);
    container.append(section);
    const v = { view, section, canvas: section.querySelector('canvas'), readout: section.querySelector('.readout'), dirty: true, visible: false, cursor: null, data: null, layout: null };
    viewState.set(view.id, v);
    observer.observe(section);
    v.canvas.addEventListener('mousemove', (e) => {
      if (!v.layout) return;
      const r = v.canvas.getBoundingClientRect();
      const c = v.layout.hit(e.clientX - r.left, e.clientY - r.top);
      if (c) { v.cursor = c; showReadout(v); }
    });
    v.canvas.addEventListener('keydown', (e) => {
      if (!v.data || !e.key.startsWith('Arrow')) return;
      e.preventDefault();
      v.cursor = moveCursor(view, v.data, v.cursor ?? view.cursor0(v.data), e.key);
      draw(v);
      showReadout(v);
    });
    v.canvas.addEventListener('focus', () => { if (v.data && !v.cursor) { v.cursor = view.cursor0(v.data); draw(v); showReadout(v); } });
    section.querySelector('.actions').addEventListener('click', (e) => {
      const kind = e.target.dataset?.export;
      if (kind && v.data) exportView(v, kind);
    });
    section.querySelector('details.table').addEventListener('toggle', (e) => {
      if (e.target.open && v.data) e.target.querySelector('.table-body').innerHTML = csvTable(view.csv(v.data));
    });
  }

  function showReadout(v) {
    if (v.cursor && v.data) v.readout.textContent = v.view.readout(v.data, v.cursor, st);
  }

  function draw(v) {
    const { width, height } = v.canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(width * dpr)), h = Math.max(1, Math.round(height * dpr));
    if (v.canvas.width !== w || v.canvas.height !== h) {
      v.canvas.width = w;
      v.canvas.height = h;
    }
    const ctx = v.canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    v.layout = drawInto(ctx, width, height, v.view.plot(v.data, v.cursor), themeColors(v.canvas));
  }

  function render(v) {
    const t0 = performance.now();
    performance.mark(`render-${v.view.id}-start`);
    try {
      v.data = v.view.compute({ pe, st, extras, memo });
      v.section.classList.remove('failed');
    } catch (e) {
      v.readout.textContent = `Cannot compute this view with these settings: ${e.message}`;
      v.section.classList.add('failed');
      v.dirty = false;
      return;
    }
    if (v.cursor) v.cursor = moveCursor(v.view, v.data, v.cursor, '');  // clamp to the new data
    draw(v);
    performance.mark(`render-${v.view.id}-end`);
    performance.measure(`render ${v.view.id}`, `render-${v.view.id}-start`, `render-${v.view.id}-end`);
    v.dirty = false;
    v.canvas.dataset.renders = String(Number(v.canvas.dataset.renders ?? 0) + 1);
    if (v.cursor) showReadout(v);
    $('status').textContent = `SIMD: ${pe.simdArch} · ${v.view.id} computed and drawn in ${(performance.now() - t0).toFixed(1)} ms`;
  }

  // Results shared by views within one redraw (e.g. the sinusoidal table).
  let memoTable = new Map();
  function memo(key, fn) {
    if (!memoTable.has(key)) memoTable.set(key, fn());
    return memoTable.get(key);
  }

  let frame = 0;
  function schedule() {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      performance.mark('frame-start');
      memoTable = new Map();
      for (const v of viewState.values()) if (v.dirty && v.visible) render(v);
      performance.mark('frame-end');
      performance.measure('frame', 'frame-start', 'frame-end');  // one redraw of the visible views
      document.body.dataset.ready = 'true';
    });
  }

  function exportView(v, kind) {
    const caption = `posenc · ${v.view.caption(st)}`;
    if (kind === 'csv') {
      download(`posenc-${v.view.id}.csv`, new Blob([`# ${caption}\n${v.view.csv(v.data)}`], { type: 'text/csv' }));
      return;
    }
    const scale = kind === 'png2' ? 2 : 1;
    const { width, height } = v.canvas.getBoundingClientRect();
    const band = 24;
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round((height + band) * scale);
    const ctx = canvas.getContext('2d');
    ctx.scale(scale, scale);
    const colors = themeColors(v.canvas);
    drawInto(ctx, width, height, v.view.plot(v.data, null), colors);
    ctx.fillStyle = colors.bg;
    ctx.fillRect(0, height, width, band);
    ctx.fillStyle = colors.fg;
    ctx.font = '11px "DejaVu Sans", sans-serif';
    ctx.textBaseline = 'middle';
    ctx.fillText(caption, 6, height + band / 2, width - 12);
    canvas.toBlob((blob) => download(`posenc-${v.view.id}@${scale}x.png`, blob), 'image/png');
  }

  function update(patch, commit) {
    st = { ...st, ...patch };
    if (st.lTarget < st.lTrain && ('lTrain' in patch || 'lTarget' in patch)) {
      // L_target below L_train means no extension: keep the factor at 1.
      st.lTarget = st.lTrain;
    }
    syncControls(inputs, form, st);
    const hash = toHash(st);
    if (hash !== location.hash && !(hash === '#' && location.hash === '')) {
      if (commit) history.pushState(null, '', hash);
      else history.replaceState(null, '', hash);
    }
    for (const v of viewState.values()) v.dirty = true;
    schedule();
  }

  window.addEventListener('popstate', () => {
    st = fromHash(location.hash);
    restorePreset();
    syncControls(inputs, form, st);
    for (const v of viewState.values()) v.dirty = true;
    schedule();
  });
  window.addEventListener('resize', () => { for (const v of viewState.values()) v.dirty = true; schedule(); });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    syncControls(inputs, form, st);
    for (const v of viewState.values()) v.dirty = true;
    schedule();
  });

  // A preset in the URL brings back what the URL cannot hold (LongRoPE factors).
  function restorePreset() {
    presetSelect.value = st.preset;
    const p = pe.presets.presets.find((x) => x.id === st.preset);
    $('preset-details').hidden = !p;
    extras.longFactors = null;
    if (p && p.scheme === 'rope') {
      const params = pe.ropeParamsFromConfig(p.config, { layerType: p.layerTypes ? p.layerTypes[0] : '' });
      if (params.scaling?.type === 'longrope') extras.longFactors = { shortFactor: params.scaling.shortFactor, longFactor: params.scaling.longFactor };
      $('preset-source').textContent = `Source: ${p.source}`;
      $('preset-config').textContent = JSON.stringify(p.config, null, 2);
    }
  }
  restorePreset();
  syncControls(inputs, form, st);
  form.addEventListener('submit', (e) => e.preventDefault());
  window.posencExplorer = { pe, get state() { return st; }, views: viewState };  // for tests and the console
  schedule();
}

main();
