// Controls bound to settings: number boxes with log or linear sliders, selects, checkboxes, lists
// of checkboxes and play buttons. Each reports (key, value, commit): commit is true for a change
// the user has finished (number box change, slider release, select, checkbox, play stopped) and
// false while a slider drags, a box is being typed in or a play button runs. A value that breaks
// the field's rule is refused visibly, with the rule, and changes nothing.
// sync(st, external) shows the settings; the box being typed in and the slider being dragged keep
// what the user is doing, unless the change comes from elsewhere (external: Back, a new model).
import { FIELDS, describeRule, parseField } from '../settings/state.js';

function sliderToValue(s, t) {
  return s.log ? s.min * (s.max / s.min) ** (t / 1000) : s.min + ((s.max - s.min) * t) / 1000;
}
function valueToSlider(s, v) {
  const t = s.log ? (Math.log(Math.max(v, s.min) / s.min) / Math.log(s.max / s.min)) * 1000
    : ((v - s.min) / (s.max - s.min || 1)) * 1000;
  return Math.max(0, Math.min(1000, Math.round(t)));
}

/**
 * One control for setting `key`. o: { label, kind: 'number' | 'select' | 'checkbox' | 'text' |
 * 'checks' | 'play', slider: { min, max, log, snap (v → the value to stop at) } or st → that, values (checks and
 * selects), labels ({ value: text } shown in a select), validate(v, st) → '' or a refusal,
 * when(st) → false greys it out and disables it (it would do nothing now; whenText says when
 * it does), shown(st) → false hides it (it means nothing for what is drawn), labelFor(st) → the label as the settings name
 * the number now (d_model or head_dim), play: { step, max, interval } }.
 * Returns { element, sync(st, external) }.
 */
export function buildControl(key, o, onChange) {
  const label = o.label ?? FIELDS[key].label ?? key;
  const wrap = document.createElement('div');
  wrap.className = `control control-${o.kind ?? 'number'}`;
  if (o.kind === 'checks') return checksControl(key, o, label, wrap, onChange);
  if (o.kind === 'play') return playControl(key, o, label, wrap, onChange);
  return fieldControl(key, o, label, wrap, onChange);
}

// A list of checkboxes for a list-valued setting ('a,b,c'); each tick is a committed change.
function checksControl(key, o, label, wrap, onChange) {
  const group = document.createElement('fieldset');
  group.className = 'checks';
  group.innerHTML = `<legend>${label}</legend>`;
  const boxes = o.values.map((v) => {
    const l = document.createElement('label');
    const cb = document.createElement('input');
    cb.type = 'checkbox';
    cb.name = `${key}-${v}`;
    cb.addEventListener('change', () => onChange(key, boxes.filter((b) => b.checked).map((b) => b.value).join(','), true));
    cb.value = v;
    l.append(cb, ` ${v}`);
    group.append(l);
    return cb;
  });
  wrap.append(group);
  const sync = (st) => {
    const on = st[key].split(',');
    for (const b of boxes) b.checked = on.includes(b.value);
  };
  return { element: wrap, sync };
}

// A play button that steps the setting every o.play.interval ms, back to 0 past o.play.max.
function playControl(key, o, label, wrap, onChange) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'play';
  button.textContent = `▶ ${label}`;
  button.setAttribute('aria-pressed', 'false');
  let timer = 0, st0 = null;
  // Stopping commits the position reached (one history entry), unless Back stopped it.
  const stop = (commit = true) => {
    if (!timer) return;
    cancelAnimationFrame(timer);
    timer = 0;
    button.setAttribute('aria-pressed', 'false');
    button.textContent = `▶ ${label}`;
    if (commit) onChange(key, st0[key], true);
  };
  let last = 0;
  const tick = (t) => {
    if (t - last >= (o.play.interval ?? 100)) {
      last = t;
      const next = st0[key] + o.play.step >= o.play.max ? 0 : st0[key] + o.play.step;
      onChange(key, next, false);
    }
    timer = requestAnimationFrame(tick);
  };
  button.addEventListener('click', () => {
    if (timer) { stop(); return; }
    button.setAttribute('aria-pressed', 'true');
    button.textContent = `❚❚ stop`;
    timer = requestAnimationFrame(tick);
  });
  wrap.append(button);
  return { element: wrap, sync: (st) => { st0 = st; }, stop };
}

// The form element of a field control: a select, a checkbox, a text box or a number box.
function inputFor(key, o) {
  const f = FIELDS[key];
  let input;
  if (o.kind === 'select') {
    input = document.createElement('select');
    for (const v of o.values ?? f.values) input.add(new Option(o.labels?.[v] ?? v, v));
  } else if (o.kind === 'checkbox') {
    input = document.createElement('input');
    input.type = 'checkbox';
  } else {
    input = document.createElement('input');
    input.type = o.kind === 'text' ? 'text' : 'number';
    if (input.type === 'number') {
      input.min = f.min;
      input.max = f.max;
      input.step = f.type === 'int' ? 1 : 'any';
      input.required = true;
    }
  }
  input.id = `control-${key}${o.suffix ?? ''}`;
  input.name = key;
  return input;
}

// The slider beside a number box: dragging writes the box and sends uncommitted changes, letting go
// commits. o.slider: the slider's scale, or a function of the settings giving it.
function sliderFor(key, o, label, input, check, onChange) {
  const f = FIELDS[key];
  let slider = typeof o.slider === 'function' ? null : o.slider, dragging = false;
  const range = document.createElement('input');
  range.type = 'range';
  range.min = 0;
  range.max = 1000;
  range.setAttribute('aria-label', `${label} slider`);
  range.dataset.for = key;
  range.addEventListener('input', () => {
    dragging = true;
    let v = sliderToValue(slider, range.valueAsNumber);
    v = f.type === 'int' ? Math.round(v) : +v.toPrecision(4);
    if (slider.snap) v = slider.snap(v);
    input.value = String(v);
    if (check() !== undefined) onChange(key, v, false);
  });
  range.addEventListener('change', () => {
    dragging = false;
    const v = check();
    if (v !== undefined) onChange(key, v, true);
  });
  range.addEventListener('blur', () => { dragging = false; });
  return {
    element: range,
    // The slider being dragged keeps its place unless the settings changed under it.
    sync(st, external) {
      if (typeof o.slider === 'function') slider = o.slider(st);
      if (external || !dragging || document.activeElement !== range) {
        if (external) dragging = false;
        range.value = String(valueToSlider(slider, st[key]));
      }
    },
  };
}

// A select, checkbox, text or number box (with its slider, if any) and the rule it refuses with.
function fieldControl(key, o, label0, wrap, onChange) {
  let label = label0;
  const rule = document.createElement('span');
  rule.className = 'rule';
  rule.setAttribute('role', 'status');
  const input = inputFor(key, o);
  rule.id = `${input.id}-rule`;
  input.setAttribute('aria-describedby', rule.id);
  let current = null;  // the settings last shown, for a rule that depends on them (validate)
  const l = document.createElement('label');
  l.htmlFor = input.id;
  l.textContent = label;
  const read = () => (o.kind === 'checkbox' ? (input.checked ? '1' : '0') : input.value);
  const check = () => {
    const v = parseField(key, read());
    // A rule that depends on the settings waits for them (sync gives them before any input).
    const bad = v === undefined ? `${label} must be ${describeRule(key)}` : (current && o.validate?.(v, current)) || '';
    input.setCustomValidity(bad);
    rule.textContent = bad;
    wrap.classList.toggle('invalid', Boolean(bad));
    if (bad) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid');
    return bad ? undefined : v;
  };
  const committed = o.kind === 'select' || o.kind === 'checkbox';
  // typing: the box holds keystrokes not committed yet (from an input event to the change event that
  // Enter or leaving the box sends), or a refused value. Only then does sync leave the focused box
  // alone: once committed it shows the settings again, so Back right after Enter shows what Back
  // restored (issue 20).
  let typing = false;
  input.addEventListener(committed ? 'change' : 'input', () => {
    typing = !committed;
    const v = check();
    if (v !== undefined) onChange(key, v, committed);
  });
  if (!committed) {
    input.addEventListener('change', () => {
      const v = check();
      typing = v === undefined;  // a refused value stays in the box, with its rule
      if (v !== undefined) onChange(key, v, true);
    });
  }
  input.addEventListener('blur', () => { typing = false; });

  const range = o.slider ? sliderFor(key, o, label, input, check, onChange) : null;
  if (o.kind === 'checkbox') {
    l.prepend(input, ' ');
    wrap.append(l);
  } else wrap.append(l, ...(range ? [range.element] : []), input);
  const why = document.createElement('span');  // why it is greyed, when it is
  why.className = 'why';
  wrap.append(why, rule);
  return {
    element: wrap,
    sync(st, external = false) {
      current = st;
      // The box being typed in keeps what the user typed (and its refusal, if any).
      if (external || !typing || document.activeElement !== input) {
        if (external) typing = false;
        if (o.kind === 'checkbox') input.checked = st[key];
        else if (input.value !== String(st[key])) input.value = String(st[key]);  // the caret stays put
        input.setCustomValidity('');
        input.removeAttribute('aria-invalid');
        rule.textContent = '';
        wrap.classList.remove('invalid');
      }
      if (o.when) {
        const on = o.when(st);
        wrap.classList.toggle('dim', !on);
        input.disabled = !on;
        if (range) range.element.disabled = !on;
        why.textContent = on ? '' : `used only ${o.whenText ?? 'in another setting'}`;
      }
      if (o.shown) wrap.hidden = !o.shown(st);
      const named = o.labelFor?.(st) ?? label;
      if (named !== label) {
        label = named;
        l.textContent = label;
        range?.element.setAttribute('aria-label', `${label} slider`);
      }
      range?.sync(st, external);
    },
  };
}
