// What the lab's trained models learned, in headless Debian Chromium: the learned chapter opens on the
// lab's trained pos_emb, T5's trained bias is read through the lab's buckets, and KERPLE's and FIRE's
// trained biases sit beside ALiBi's — every read-out checked against data/lab-result.json, read here
// independently, with the formulas written out in this file; a result trained in the page is
// preferred to the shipped one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { explorerSession } from './launch.mjs';

const shipped = JSON.parse(await readFile(new URL('../../data/lab-result.json', import.meta.url), 'utf8'));
const position = (scheme) => shipped.results.find((r) => r.scheme === scheme).position;
const ex = explorerSession();
const { view, open, drawn } = ex;

before(async () => { await ex.start(); await open(); });
after(async () => ex.close && ex.close());

const readout = (id) => ex.page.textContent(`${view(id)} .readout`);
const text = (id, part) => ex.page.textContent(`${view(id)} ${part}`);
async function keys(id, ...presses) {
  await ex.page.focus(`${view(id)} canvas`);
  for (const [key, times] of presses) for (let k = 0; k < times; k++) await ex.page.keyboard.press(key);
}
const close = (shown, want, digits, what) => assert.ok(Math.abs(Number(shown) - want) <= 0.51 * 10 ** -digits,
  `${what}: shown ${shown}, the data gives ${want}`);

// Mean cosine similarity of neighbouring rows and of all pairs of rows.
function similarity(w, rows, d) {
  const cos = (i, j) => {
    let s = 0, a = 0, b = 0;
    for (let k = 0; k < d; k++) { s += w[i * d + k] * w[j * d + k]; a += w[i * d + k] ** 2; b += w[j * d + k] ** 2; }
    return s / Math.sqrt(a * b);
  };
  let near = 0, all = 0;
  for (let i = 0; i + 1 < rows; i++) near += cos(i, i + 1);
  for (let i = 0; i < rows; i++) for (let j = i + 1; j < rows; j++) all += cos(i, j);
  return { near: near / (rows - 1), all: all / (rows * (rows - 1) / 2) };
}

test('the learned chapter shows the lab\'s trained table by default, measured, with exact read-outs', async () => {
  const { shape: [rows, d], values } = position('learned').pos_emb;
  await drawn('learned');
  // The shipped result loads beside the first draw (≈ 750 KB); the view redraws when it arrives.
  await ex.page.waitForFunction(() => /Drawn from (seed \d+.s model of )?the shipped result/.test(
    document.querySelector('section[data-view="learned"] .note')?.textContent ?? ''));
  assert.equal((await ex.state()).learnedSource, 'trained');
  const note = await text('learned', '.note');
  assert.match(note, new RegExp(`Table: the lab's trained pos_emb, ${rows} × ${d}`));
  assert.match(note, /max_len 512 and d_model 128 size the table at initialisation, not this one/);
  assert.match(note, /Drawn from seed 1.s model of the shipped result/);
  // It opens on a row the table has (the lookup defaults inside the 64 trained rows), not a refusal.
  assert.doesNotMatch(note, /No row for position/);
  assert.ok((await ex.state()).learnedPos < rows);
  // The sentence's numbers, recomputed from the JSON.
  const m = similarity(values, rows, d);
  const sentence = await text('learned', '[data-caption="learned"]');
  assert.match(sentence, /learned markov .* for 2000 steps at T_train 64, and its table is not smooth/);
  assert.ok(sentence.includes(`neighbouring rows have mean cosine similarity ${m.near.toFixed(3)}, all pairs of rows ${m.all.toFixed(3)}`), sentence);
  assert.ok(sentence.includes(`neighbours ${(m.near / m.all).toFixed(2)}× as similar`), sentence);
  // The heatmap's read-out at a row and dimension is that weight of pos_emb.
  await keys('learned', ['ArrowRight', 10], ['ArrowUp', 5]);
  const [, p, dim, w] = (await readout('learned')).match(/^position (\d+), dim (\d+): weight (\S+)$/);
  assert.deepEqual([Number(p), Number(dim)], [10, 5]);
  close(w, values[10 * d + 5], 6, 'pos_emb[10][5]');
  // It has rows 0 … 63 only; the table at initialisation keeps the settings' size and its limit.
  await ex.page.fill('#control-learnedPos', '64');
  await ex.page.press('#control-learnedPos', 'Enter');
  await ex.page.waitForFunction(() => /No row for position 64: the table has rows 0 … 63 only/.test(
    document.querySelector('section[data-view="learned"] .note').textContent));
  await ex.page.focus('#control-learnedSource');
  await ex.page.selectOption('#control-learnedSource', 'init');
  await ex.page.waitForFunction(() => /Table: seeded N\(0, 0\.02²\), as at the start of training/.test(
    document.querySelector('section[data-view="learned"] .note').textContent));
  assert.equal(await ex.page.$(`${view('learned')} [data-caption="learned"]`), null, 'the seeded table claims what training made');
  // The guided steps: the first goes back to the trained table, the last past max_len of the table at initialisation.
  const step = (k) => ex.clickSettled(`[aria-label^="What to notice: 4."] button[data-step="${k}"]`);
  await step(0);
  assert.deepEqual(await ex.page.evaluate(() => [window.posencExplorer.state.learnedSource, window.posencExplorer.state.learnedPos]), ['trained', 10]);
  await step(2);
  await ex.page.waitForFunction(() => /No row for position 512: the table has rows 0 … 511 only/.test(
    document.querySelector('section[data-view="learned"] .note').textContent));
  assert.deepEqual(ex.problems, []);
});

// T5's decoder bucket of a key d back (HF's _relative_position_bucket, bidirectional false, 32 buckets,
// max distance 128), in float32 as torch computes it.
function t5Bucket(d) {
  if (d < 16) return d;
  const f = Math.fround;
  const scaled = f(f(f(Math.log(f(d / 16))) / f(Math.log(128 / 16))) * 16);
  return Math.min(16 + Math.trunc(scaled), 31);
}

test('T5\'s trained bias per head reads, at each distance, the bias of that distance\'s bucket', async () => {
  await open();
  const { shape: [, H], values } = position('t5').t5_bias;
  await drawn('t5-trained');
  let at = 1;  // the cursor starts at distance 1
  for (const dist of [1, 20, 63, 70, 127]) {
    await keys('t5-trained', ['ArrowRight', dist - at]);
    at = dist;
    const r = await readout('t5-trained');
    const b = t5Bucket(dist);
    assert.match(r, new RegExp(`^distance ${dist} \\(bucket ${b}${b > 26 ? ', never trained' : ''}\\): `), r);
    const shown = [...r.matchAll(/head (\d) (\S+?)(,|$)/g)].map((x) => x[2]);
    assert.equal(shown.length, H);
    shown.forEach((v, h) => close(v, values[b * H + h], 4, `t5_bias[${b}][${h}] at distance ${dist}`));
  }
  assert.match(await text('t5-trained', '.note'), /Buckets 27 … 31 \(distance 67 and on\) hold no distance below T_train 64/);
  assert.deepEqual(ex.problems, []);
});

test('KERPLE\'s and FIRE\'s trained biases read exactly from r1, r2 and the f samples, beside ALiBi\'s slopes', async () => {
  await open();
  await drawn('learned-bias');
  const log = position('kerple_log'), power = position('kerple_power'), fire = position('fire');
  const H = log.r1.values.length;
  let at = 1;
  for (const dist of [1, 2, 10, 100]) {
    await keys('learned-bias', ['ArrowRight', dist - at]);
    at = dist;
    const r = await readout('learned-bias');
    assert.match(r, new RegExp(`^distance ${dist}, `));
    const group = (name) => r.match(new RegExp(`${name} ([^;]+)`))[1].split(' / ');
    group('ALiBi').forEach((v, h) => close(v, -(2 ** (-8 * (h + 1) / H)) * dist, 5, `ALiBi head ${h}`));
    group('KERPLE log').forEach((v, h) => close(v, -log.r1.values[h] * Math.log(1 + log.r2.values[h] * dist), 5, `KERPLE log head ${h}, d ${dist}`));
    group('KERPLE power').forEach((v, h) => close(v, -power.r1.values[h] * dist ** power.r2.values[h], 5, `KERPLE power head ${h}, d ${dist}`));
  }
  // FIRE, layer 0, sample 16: x = 16/64, the distance back from query 63 where ψ(d)/ψ(max(L, 63)) = x.
  // (Its panel is the next one: past the last distance, ArrowRight goes on to it.)
  await keys('learned-bias', ['End', 1], ['ArrowRight', 1], ['ArrowRight', 16]);
  const c = fire['blocks.0.fire.c'].values[0], L = fire['blocks.0.fire.L'].values[0], f = fire['blocks.0.fire.f'].values;
  const r = await readout('learned-bias');
  const [, dist, heads] = r.match(/^FIRE layer 0, sample 16 \(x = 16\/64\) at distance (\S+) back from query 63: (.*)$/);
  close(dist, Math.expm1((16 / 64) * Math.log(1 + c * Math.max(L, 63))) / c, 4, 'FIRE sample 16\'s distance');
  [...heads.matchAll(/head (\d) (\S+?)(,|$)/g)].forEach((x, h) => close(x[2], f[16 * H + h], 5, `FIRE f[16][${h}]`));
  // The CSV holds every value at full precision.
  const [download] = await Promise.all([ex.page.waitForEvent('download'), ex.page.click(`${view('learned-bias')} button[data-export="csv"]`)]);
  const csv = (await readFile(await download.path(), 'utf8')).split('\n');
  assert.equal(csv[1], 'scheme,layer,head,sample,distance,bias');
  const row = csv.find((l) => l.startsWith('kerple_log,,2,,10,'));
  close(row.split(',')[5], -log.r1.values[2] * Math.log(1 + log.r2.values[2] * 10), 9, 'the CSV\'s KERPLE log head 2 at d 10');
  // The captions measure what they claim.
  const kerple = await text('learned-bias', '[data-caption="kerple"]');
  const near = log.r1.values.map((a, h) => a * Math.log(1 + log.r2.values[h]));
  assert.ok(kerple.includes(`costs ${Math.min(...near).toFixed(3)} … ${Math.max(...near).toFixed(3)} with KERPLE log (steeper than every ALiBi head)`), kerple);
  assert.match(await text('learned-bias', '[data-caption="fire"]'), /^FIRE at query 63: layer 0 has every head below −1 from distance/);
  assert.deepEqual(ex.problems, []);
});

test('a result trained in the page is drawn instead of the shipped one, and the views say which', async () => {
  await open();
  await drawn('lab-training');
  for (const s of ['none', 'sinusoidal', 'learned', 'rope', 'alibi', 't5']) {
    const box = `${view('lab-training')} input[name="labSchemes-${s}"]`;
    if (s === 'learned') await ex.page.check(box); else await ex.page.uncheck(box);
  }
  await ex.page.selectOption('#control-labSize', 'tiny');
  await ex.page.fill('#control-labSteps', '20');
  await ex.page.press('#control-labSteps', 'Enter');
  await ex.page.waitForFunction(() => window.posencExplorer.state.labSteps === 20);
  const before = await ex.renders('learned');
  await ex.page.click(`${view('lab-training')} [data-lab="start"]`);
  await ex.page.waitForFunction(() => window.posencExplorer.lab.run?.state === 'done', null, { timeout: 300000 });
  const [rows, d, values] = await ex.page.evaluate(() => {
    const p = window.posencExplorer.lab.run.jobs['learned:1'].result.results[0].position.pos_emb;
    return [...p.shape, Array.from(p.values)];
  });
  assert.deepEqual([rows, d], [64, 32]);  // the tiny model
  await drawn('learned', before);
  assert.match(await text('learned', '.note'), /Table: the lab's trained pos_emb, 64 × 32 .*Drawn from your run in this browser/);
  await keys('learned', ['ArrowRight', 3], ['ArrowUp', 2]);
  const [, p, dim, w] = (await readout('learned')).match(/^position (\d+), dim (\d+): weight (\S+)$/);
  close(w, values[Number(p) * d + Number(dim)], 6, `your pos_emb[${p}][${dim}]`);
  // That run has no T5 model: the shipped one is drawn, and the note says why.
  await drawn('t5-trained');
  assert.match(await text('t5-trained', '.note'), /Drawn from seed 1.s model of the shipped result.*\(the lab's result on show has no t5 model\)/);
  assert.deepEqual(ex.problems, []);
});
