// Absolute vs relative: one attention block drawn from input to output, with where each scheme
// puts position — added to the embedding (sinusoidal, learned), rotating q and k (RoPE, xPos), a
// bias on the scores (ALiBi, T5, KERPLE, FIRE), or nothing but the causal mask (NoPE) — and the
// scheme on the page highlighted (chapter "comparison"). A diagram: no numbers to compute.
import { SERIES } from '../plot/colormap.js';
import { contrast, legible } from '../plot/legible.js';
import { FONT, SMALL } from '../plot/core.js';
import { moveIndex } from '../plot/cursor.js';
import { PAGE_SCHEMES } from './shared/schemes.js';
import { ATTENTION_SCHEMES } from '../settings/state.js';

const STAGES = [
  { title: 'tokens', formula: 'the cat sat …', what: 'the words, as ids; nothing says where each one is yet' },
  { title: 'embedding', formula: 'x = E[token] + p(pos)', what: 'each id becomes a vector; absolute schemes add a vector for the position here, once' },
  { title: 'project', formula: 'q = xW_Q, k = xW_K,\nv = xW_V', what: 'every layer makes queries, keys and values from its input' },
  { title: 'rotate q, k', formula: 'R(m)·q, R(n)·k', what: 'rotary schemes turn each pair of q and k by its position, so q·k sees only n − m' },
  { title: 'scores', formula: 'q·k / √d + b(i − j)', what: 'bias schemes add a number for the distance to every score' },
  { title: 'mask, softmax', formula: 'keys j ≤ i only,\nweights sum to 1', what: 'a decoder hides the keys after each query; with no other position signal (NoPE) that mask alone tells order' },
  { title: 'mix values', formula: 'Σ weight · v', what: 'each output is a weighted sum of the values; the next layer starts again at project' },
];
const GROUPS = {
  absolute: { name: 'absolute: a vector added to the embedding, once', color: SERIES[0] },
  rotary: { name: 'relative: q and k rotated, in every layer', color: SERIES[1] },
  bias: { name: 'relative: a bias on the scores, in every layer', color: SERIES[2] },
  none: { name: 'none: only the causal mask', color: SERIES[7] },
};
// The schemes' tags (schemes.js, where); a tag's id is the page's scheme, the positions setting.
const TAGS = PAGE_SCHEMES.filter((s) => s.where).map((s) => ({ ...s.where, id: s.id }));
const WIDE = 760;

function roundRect(ctx, x, y, w, h, r) {
  ctx.beginPath();
  ctx.roundRect(x, y, w, h, r);
}

// One tag: outlined in its group's colour, filled when it is the page's scheme.
function drawTag(ctx, tag, x, y, w, current, colors) {
  const color = legible(GROUPS[tag.group].color, colors);
  roundRect(ctx, x, y, w, 20, 10);
  ctx.lineWidth = current ? 3 : 1.5;
  ctx.strokeStyle = color;
  if (current) { ctx.fillStyle = color; ctx.fill(); }
  ctx.stroke();
  // On the filled tag, white or black: whichever reads better on its colour.
  ctx.fillStyle = !current ? colors.fg : contrast('#ffffff', color) >= contrast('#000000', color) ? '#ffffff' : '#000000';
  ctx.font = current ? `bold ${FONT}` : FONT;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  ctx.fillText(current ? `▶ ${tag.label}` : tag.label, x + w / 2, y + 10.5, w - 6);
}

function drawStage(ctx, s, k, box, current, cursor, colors) {
  const { x, y, w, h } = box;
  roundRect(ctx, x, y, w, h, 6);
  ctx.fillStyle = colors.bg;
  ctx.fill();
  ctx.lineWidth = current ? 3.5 : 1;
  ctx.strokeStyle = current ? legible(GROUPS[current.group].color, colors) : colors.muted;
  ctx.stroke();
  if (cursor) {
    ctx.setLineDash([4, 3]);
    ctx.lineWidth = 1.5;
    ctx.strokeStyle = colors.mark;
    roundRect(ctx, x - 4, y - 4, w + 8, h + 8, 8);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  ctx.fillStyle = colors.fg;
  ctx.font = `bold ${FONT}`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  ctx.fillText(`${k + 1}. ${s.title}`, x + w / 2, y + 8, w - 8);
  ctx.font = SMALL;
  ctx.fillStyle = colors.muted;
  s.formula.split('\n').forEach((line, r) => ctx.fillText(line, x + w / 2, y + 26 + 13 * r, w - 8));
}

function arrow(ctx, x0, y0, x1, y1, colors) {
  ctx.strokeStyle = colors.muted;
  ctx.fillStyle = colors.muted;
  ctx.lineWidth = 1.5;
  ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
  const a = Math.atan2(y1 - y0, x1 - x0);
  ctx.beginPath();
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - 7 * Math.cos(a - 0.45), y1 - 7 * Math.sin(a - 0.45));
  ctx.lineTo(x1 - 7 * Math.cos(a + 0.45), y1 - 7 * Math.sin(a + 0.45));
  ctx.closePath();
  ctx.fill();
}

// The groups' legend, wrapped, from y; returns the y below it.
function drawLegend(ctx, width, y, colors) {
  ctx.font = FONT;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  let x = 8;
  for (const g of Object.values(GROUPS)) {
    const w = ctx.measureText(g.name).width + 26;
    if (x + w > width - 8 && x > 8) { x = 8; y += 20; }
    ctx.fillStyle = legible(g.color, colors);
    ctx.fillRect(x, y - 6, 16, 12);
    ctx.fillStyle = colors.fg;
    ctx.fillText(g.name, x + 22, y, width - x - 30);
    x += w + 14;
  }
  return y + 16;
}

function drawBlock(ctx, width, height, { data, cursor }, colors) {
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  const current = TAGS.find((t) => t.id === data.scheme);
  const hits = [];
  ctx.font = FONT;
  ctx.fillStyle = colors.fg;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'top';
  ctx.fillText(`On this page: ${current.label} — ${GROUPS[current.group].name}`, 8, 6, width - 16);
  if (width >= WIDE) {
    const gap = 22, bw = (width - 16 - gap * 6) / 7, top = 58, bh = 56;
    const boxAt = (k) => ({ x: 8 + k * (bw + gap), y: top, w: bw, h: bh });
    // Brackets: once at the input, then every layer.
    const bracket = (k0, k1, label) => {
      const a = boxAt(k0), b = boxAt(k1), y = top - 12;
      ctx.strokeStyle = colors.muted;
      ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(a.x, y + 6); ctx.lineTo(a.x, y); ctx.lineTo(b.x + b.w, y); ctx.lineTo(b.x + b.w, y + 6); ctx.stroke();
      ctx.fillStyle = colors.muted;
      ctx.font = SMALL;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'bottom';
      ctx.fillText(label, (a.x + b.x + b.w) / 2, y - 2, b.x + b.w - a.x);
    };
    bracket(0, 1, 'once, at the input');
    bracket(2, 6, 'in every layer, again and again');
    STAGES.forEach((s, k) => {
      const box = boxAt(k);
      drawStage(ctx, s, k, box, current.stage === k ? current : null, cursor?.i === k, colors);
      if (k < 6) arrow(ctx, box.x + bw + 2, top + bh / 2, box.x + bw + gap - 2, top + bh / 2, colors);
      hits.push({ ...box, i: k });
      TAGS.filter((t) => t.stage === k).forEach((t, r) => {
        const y = top + bh + 12 + r * 26;
        ctx.strokeStyle = legible(GROUPS[t.group].color, colors);
        ctx.lineWidth = 1;
        if (r === 0) { ctx.beginPath(); ctx.moveTo(box.x + bw / 2, top + bh); ctx.lineTo(box.x + bw / 2, y); ctx.stroke(); }
        drawTag(ctx, t, box.x + 4, y, bw - 8, t === current, colors);
        hits.push({ x: box.x, y, w: bw, h: 20, i: k });
      });
    });
    drawLegend(ctx, width, top + bh + 12 + 4 * 26 + 14, colors);
  } else {
    // A phone: the stages top to bottom, their schemes beside them.
    const top = 46, rowH = 66, bh = 52, bw = Math.min(190, width * 0.42), x0 = 26;
    ctx.strokeStyle = colors.muted;
    ctx.lineWidth = 1;
    const y2 = top + 2 * rowH, y6 = top + 6 * rowH + bh;
    ctx.beginPath(); ctx.moveTo(x0 - 6, y2); ctx.lineTo(x0 - 14, y2); ctx.lineTo(x0 - 14, y6); ctx.lineTo(x0 - 6, y6); ctx.stroke();
    ctx.save();
    ctx.translate(x0 - 18, (y2 + y6) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillStyle = colors.muted;
    ctx.font = SMALL;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    ctx.fillText('in every layer', 0, 0);
    ctx.restore();
    STAGES.forEach((s, k) => {
      const box = { x: x0, y: top + k * rowH, w: bw, h: bh };
      drawStage(ctx, s, k, box, current.stage === k ? current : null, cursor?.i === k, colors);
      if (k < 6) arrow(ctx, x0 + bw / 2, box.y + bh + 1, x0 + bw / 2, box.y + rowH - 2, colors);
      hits.push({ x: 0, y: box.y, w: width, h: bh, i: k });
      const tags = TAGS.filter((t) => t.stage === k);
      const tx = x0 + bw + 14, room = width - tx - 6;
      const perRow = Math.max(1, Math.min(2, Math.floor((room + 6) / 72))), tw = Math.min(100, (room - 6 * (perRow - 1)) / perRow);
      tags.forEach((t, r) => {
        const col = r % perRow, row = Math.floor(r / perRow);
        drawTag(ctx, t, tx + col * (tw + 6), box.y + 2 + row * 24, tw, t === current, colors);
      });
    });
    drawLegend(ctx, width, top + 7 * rowH + 4, colors);
  }
  return {
    across: width >= WIDE,  // the stages left to right (else top to bottom)
    hit(x, y) {
      const h = hits.find((b) => x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h);
      return h ? { i: h.i } : null;
    },
  };
}

export default {
  id: 'where-position',
  controls: [['attnScheme', { kind: 'select', label: 'positions', suffix: '-block', values: ATTENTION_SCHEMES,
    labels: { none: 'none (NoPE)' } }]],
  height: (width) => (width >= WIDE ? 276 : 46 + 7 * 66 + 70),
  compute: ({ st }) => ({ scheme: st.attnScheme, xs: STAGES.map((_, k) => k) }),
  plot: (data, cursor) => ({ kind: 'custom', spec: { draw: drawBlock, data, cursor } }),
  // Along the stages as drawn: left to right on a desktop (ArrowUp and ArrowDown do nothing there), top
  // to bottom on a phone (ArrowDown goes on to the next stage).
  move: (data, c, key, layout) => {
    const vertical = { ArrowDown: 'ArrowRight', ArrowUp: 'ArrowLeft' }[key];
    if (vertical && layout?.across !== false) return c;
    return moveIndex(c, STAGES.length, vertical ?? key);
  },
  note(data) {
    const t = TAGS.find((x) => x.id === data.scheme);
    const g = GROUPS[t.group];
    return `${t.label}: ${g.name}. xPos, KERPLE and FIRE are drawn to show where they act; the page's other chapters `
      + 'compute the rest.';
  },
  readout(data, c) {
    const s = STAGES[c.i];
    const here = TAGS.filter((t) => t.stage === c.i).map((t) => t.label);
    return `${c.i + 1}. ${s.title} (${s.formula}): ${s.what}${here.length ? `. Position enters here in: ${here.join(', ')}` : ''}.`;
  },
  csv: () => `stage,formula,schemes\n${STAGES.map((s, k) => `${s.title},${s.formula.replace(/,/g, ';')},`
    + `${TAGS.filter((t) => t.stage === k).map((t) => t.label).join(' ')}`).join('\n')}\n`,
  caption: (st) => `where position enters, scheme=${st.attnScheme}`,
  cursor0: (data) => ({ i: TAGS.find((t) => t.id === data.scheme).stage }),
};
