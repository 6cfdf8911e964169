// Issue 23, the explorer's third round, in headless Debian Chromium: the lesson sections it lacked
// (add vs concatenate, one-hot, where position enters, the production cos/sin cache, key
// takeaways, the lesson's errata), the guided "what to notice" steps and the prose that follows
// the preset, nothing silent (refused link values, a file a link cannot carry, Scout's published
// max_position_embeddings, head_dim for a RoPE model), touch read-outs, one orientation for the
// query × key maps, and the phone layout's scrolling tables.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { explorerSession, launchChromium } from './launch.mjs';

const ex = explorerSession();
const { view, state, open, drawn, reacts } = ex;
const note = (id) => ex.page.textContent(`${view(id)} .note`);
const readout = (id) => ex.page.textContent(`${view(id)} .readout`);
const choose = async (id) => {
  await ex.page.selectOption('#preset', id);
  await ex.page.waitForFunction((p) => window.posencExplorer.state.preset === p, id);
};
// Moves the mouse to a fraction (fx, fy) of the plot area of a view with one plot.
async function hover(id, fx, fy) {
  const box = await ex.page.locator(`${view(id)} canvas`).boundingBox();
  const plot = await ex.page.evaluate((i) => window.posencExplorer.views.find((v) => v.def.id === i).layout.plot, id);
  await ex.page.mouse.move(box.x + plot.x + fx * plot.w, box.y + plot.y + fy * plot.h);
}

before(() => ex.start());
after(() => ex.close?.());

test('add vs concatenate: [x ; p]·W equals x·W_x + p·W_p, and the width of the position changes the cost', async () => {
  await open();
  await drawn('add-vs-concat');
  const gap = Number((await note('add-vs-concat')).match(/The two maps agree to ([0-9.e+-]+)/)[1]);
  assert.ok(gap < 1e-9, `the two sides differ by ${gap}`);
  assert.match(await note('add-vs-concat'), /\(128 \+ 128 = 256 numbers\)/);
  // What adding costs links to the four terms, drawn in the misconceptions chapter.
  assert.equal(await ex.page.$eval(`${view('add-vs-concat')} .view-html a`, (a) => a.getAttribute('href')), '#view-cross-terms');
  await reacts('add-vs-concat', async () => {
    await ex.page.fill('#control-concatWidth', '512');
    await ex.page.press('#control-concatWidth', 'Enter');
  });
  assert.match(await note('add-vs-concat'), /\(128 \+ 512 = 640 numbers\)/);
  assert.deepEqual(ex.problems, []);
});

test('one-hot: every two positions are orthogonal, nothing past the table, against the sinusoidal nearness', async () => {
  await open();
  await drawn('one-hot');
  const text = await note('one-hot');
  assert.match(text, /^One-hot: 100 positions need 100 dimensions \(d_model here is 128\)/);
  assert.match(text, /has no row 64: the package's lookup says “positions\[0\] \+ offset must be in \[0, maxLen\) \(got positions\[0\] = 64, offset = 0, maxLen = 64\)/);
  // The cursor starts on position 10 with itself, 1; beside it 0; ArrowDown goes down a row, to i = 11.
  await ex.page.focus(`${view('one-hot')} canvas`);
  assert.match(await readout('one-hot'), /^one-hot: position i = 10, j = 10 \(i − j = 0\): 1\.0+$/);
  await ex.page.keyboard.press('ArrowRight');
  assert.match(await readout('one-hot'), /^one-hot: position i = 10, j = 11 .*: 0(\.0+)?$/);
  await ex.page.keyboard.press('ArrowDown');
  assert.match(await readout('one-hot'), /^one-hot: position i = 11, j = 11 .*: 1\.0+$/);
  const sims = text.match(/PE\(10\)·PE\(11\) \/ 64 = (\d+\.\d+), PE\(10\)·PE\(63\) \/ 64 = (\d+\.\d+)/);
  assert.ok(Number(sims[1]) > Number(sims[2]), 'the sinusoidal vectors of near positions are more alike');
  assert.deepEqual(ex.problems, []);
});

test('where position enters: the block highlights the scheme on the page and says where it acts', async () => {
  await open();
  await drawn('where-position');
  assert.match(await note('where-position'), /^NoPE: none: only the causal mask/);
  await reacts('where-position', () => ex.page.selectOption('#control-attnScheme-block', 'rope'));
  assert.match(await note('where-position'), /^RoPE: relative: q and k rotated, in every layer/);
  assert.equal((await state()).attnScheme, 'rope');
  await reacts('where-position', () => ex.page.selectOption('#control-attnScheme-block', 'alibi'));
  assert.match(await note('where-position'), /^ALiBi: relative: a bias on the scores/);
  assert.deepEqual(ex.problems, []);
});

test('the production cos/sin cache has the size the model\'s config gives, Scout\'s as published', async () => {
  await open();
  await choose('llama-3.1-8b');
  await drawn('rope-cache');
  // meta-llama/Llama-3.1-8B config.json: max_position_embeddings 131072, hidden_size 4096 / 32 heads
  // = head_dim 128, so 64 pairs: 131072 × 64 × 2 × 4 bytes = 67,108,864 bytes (64 MiB) in float32.
  await ex.page.waitForFunction((sel) => /Llama-3\.1-8B.*rows (equal|differ)/.test(document.querySelector(sel).textContent), `${view('rope-cache')} .note`);
  assert.match(await note('rope-cache'), /131,072 positions \(L_target\) × 64 pairs \(rotary_dim 128 \/ 2\) × 2 tables × 4 bytes \(float32\) = 67,108,864 bytes, 64\.0 MiB/);
  assert.match(await note('rope-cache'), /((gathering|recomputing) is [0-9.]+× faster|neither is 25 % faster), rows equal bit for bit/);
  // A positions menu set to another scheme (here by chapter 1's first guided step) leaves the model's own.
  const before = await ex.renders('rope-cache');
  await ex.page.click('[aria-label^="What to notice: 1."] button[data-step="0"]');
  await ex.page.waitForFunction(() => window.posencExplorer.state.attnScheme === 'none');
  await drawn('rope-cache', before);
  assert.match(await note('rope-cache'), /^The cos\/sin table for Llama-3\.1-8B/);
  // meta-llama/Llama-4-Scout-17B-16E text_config: max_position_embeddings 10485760, head_dim 128:
  // 10485760 × 64 × 2 × 4 = 5,368,709,120 bytes (5 GiB), though L_target stops at 4194304.
  // The reader scrolls on, which ends the guided step's hold on its view, then picks Scout. (Without
  // the scroll this timed out once on a loaded machine, waiting for rope-cache's note: a view drawn
  // during the hold can scroll chapter 1 back and leave rope-cache off screen, so not redrawn.)
  await ex.page.mouse.wheel(0, 1);
  const shown = await ex.renders('rope-cache');
  await choose('llama-4-scout');
  await drawn('rope-cache', shown);
  await ex.page.waitForFunction((sel) => /Scout/.test(document.querySelector(sel).textContent), `${view('rope-cache')} .note`);
  assert.match(await note('rope-cache'), /10,485,760 positions \(max_position_embeddings as published\) × 64 pairs .* = 5,368,709,120 bytes, 5\.00 GiB/);
  assert.deepEqual(ex.problems, []);
});

test('Scout\'s max_position_embeddings is shown as published, with the cap said on screen', async () => {
  await open('#deeper=long-context');  // the fold whose plots L_target limits says so
  await choose('llama-4-scout');
  assert.equal((await state()).lTarget, 4194304);
  assert.match(await ex.page.textContent('#model-message'),
    /Not shown as published: L_target \(max_position_embeddings\) is 10,485,760 in the model, but L_target here stops at 4,194,304/);
  assert.match(await ex.page.textContent('[data-live="ltarget-capped"]'), /publishes max_position_embeddings 10,485,760; L_target stops at 4,194,304/);
  assert.equal(await ex.page.isVisible('[data-live="ltarget-capped"]'), true);
  await choose('llama-3.1-8b');
  assert.equal(await ex.page.isVisible('[data-live="ltarget-capped"]'), false);
  assert.deepEqual(ex.problems, []);
});

test('the lesson ends with its key takeaways, one per chapter, and its errata, each computed and linked', async () => {
  await open();
  const lesson = await ex.page.$$eval('section[data-chapter]', (all) => all.map((c) => c.id).filter((id) => id !== 'chapter-lab'));
  const linked = await ex.page.$$eval('#lesson-summary li > a', (a) => a.map((x) => x.getAttribute('href').slice(1)));
  assert.deepEqual(linked, lesson, 'one takeaway per lesson chapter, in order');
  const errata = await ex.page.$$eval('#errata li[data-erratum]', (li) => li.map((x) => x.dataset.erratum));
  assert.ok(errata.length >= 8, `errata: ${errata}`);
  for (const id of errata) {
    // Each entry is labelled, links to a view that exists, and is linked to from the page.
    assert.match(await ex.page.textContent(`#erratum-${id} .erratum-label`), /^(wrong|contradicts itself|claims more|refines)$/);
    const to = await ex.page.getAttribute(`#erratum-${id} a.erratum-view`, 'href');
    assert.ok(await ex.page.$(`${to}[data-view]`), `erratum ${id} links to ${to}, no view`);
    assert.ok(await ex.page.$(`a.erratum-link[href="#erratum-${id}"]`), `nothing links to erratum ${id}`);
  }
  // The corrections are computed once the list comes near the screen.
  await ex.page.$eval('#errata', (s) => s.scrollIntoView());
  await ex.page.waitForFunction(() => /words 2 and 5/.test(document.querySelector('#erratum-rope-additive .correction').textContent));
  // RoPE is not additive: pairs of words at one offset give different score − q·k.
  const additive = await ex.page.textContent('#erratum-rope-additive .correction');
  const diffs = [...additive.matchAll(/(-?[0-9.]+) \(words \d+ and \d+\)/g)].map((m) => Number(m[1]));
  assert.equal(diffs.length, 3);
  assert.ok(Math.max(...diffs) - Math.min(...diffs) > 0.01, `score − q·k at one offset: ${diffs}`);
  // Random q and k at each position: RoPE's diagonals change as much as no positions at all.
  const random = await ex.page.textContent('#erratum-rope-random-check .correction');
  const [, rope, none] = random.match(/change by up to ([0-9.]+), and the same vectors with no positions at all by ([0-9.]+)/);
  assert.ok(Number(rope) > 0.1 && Number(none) > 0.1, `random check: RoPE ${rope}, none ${none}`);
  // ALiBi: the distance back and |i − j| agree on the keys a causal query sees, and only there; a refinement.
  assert.equal(await ex.page.textContent('#erratum-alibi-distance .erratum-label'), 'refines');
  const rows = await ex.page.$$eval('#erratum-alibi-distance tbody tr',
    (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  assert.deepEqual(rows[0].slice(0, 5), rows[1].slice(0, 5));
  assert.ok(rows[0].slice(5).every((v) => /∞/.test(v)), `causal row ${rows[0]}`);
  assert.ok(rows[1].slice(5).every((v) => Number(v) < 0), `symmetric row ${rows[1]}`);
  // i = 0 turns 1 rad per position: sin(0 … 6) from the package, not an alternation.
  assert.match(await ex.page.textContent('#erratum-pair0 .correction'),
    /0\.000, 0\.841, 0\.909, 0\.141, -0\.757, -0\.959, -0\.279/);
  // A link to an erratum opens it (its correction shows), and its "see it" link opens the fold of its view.
  await drawn('alibi');
  await ex.clickSettled(`${view('alibi')} a.erratum-link`);
  // Where the click went, should it miss: the link moves the focus to the erratum.
  const focused = await ex.page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);
  assert.equal(await ex.page.$eval('#erratum-alibi-distance > details', (d) => d.open), true, `focus on ${focused}`);
  assert.deepEqual(ex.problems, []);
});

// On a phone, a step into a fold it opens: the views there take their heights when first drawn,
// after the step scrolled, and the step keeps its caption and plot in sight as they do.
test('a guided step into a fold it opens keeps its caption and plot in sight on a phone', async () => {
  await ex.page.setViewportSize({ width: 390, height: 844 });
  try {
    for (const [chapter, k] of [['6.', 2], ['11.', 0]]) {
      await open();
      await ex.page.click(`[aria-label^="What to notice: ${chapter}"] button[data-step="${k}"]`);
      await ex.page.waitForTimeout(2000);
      const seen = await ex.page.evaluate(() => {
        const note = document.querySelector('.guide-note'), plot = note.closest('section[data-view]').querySelector('figure');
        const bar = document.getElementById('settings').getBoundingClientRect().bottom;
        return [note.getBoundingClientRect().top - bar, window.innerHeight - plot.getBoundingClientRect().bottom];
      });
      assert.ok(seen.every((x) => x >= 0), `step ${chapter}${k + 1}: caption below the bar by ${seen[0]} px, plot above the screen's bottom by ${seen[1]} px`);
    }
  } finally {
    await ex.page.setViewportSize({ width: 1200, height: 900 });
  }
  assert.deepEqual(ex.problems, []);
});

test('a guided step sets the state, says what to notice for the preset on the page, and Back undoes it', async () => {
  await open();
  await choose('llama-3.1-8b');
  // Llama-3.1-8B: original_max_position_embeddings 8192, so the clocks step goes past 8,192.
  const step = '[aria-label^="What to notice: 6."] button[data-step="2"]';
  await ex.page.click(step);
  await ex.page.waitForFunction(() => window.posencExplorer.state.scaling === 'none');
  const st = await state();
  assert.ok(st.pos > st.lTrain, `position ${st.pos} past L_train ${st.lTrain}`);
  assert.equal(await ex.page.getAttribute(step, 'aria-pressed'), 'true');
  const caption = await ex.page.textContent(`${view('clocks')} .guide-note`);
  assert.match(caption, /^Step 3 of 4: No scaling, past L_train\. Position 16,384 is past L_train = 8,192/);
  // The view in sight from its heading, below the open settings bar, to the bottom of its plot.
  const seen = await ex.page.$eval(view('clocks'), (s) => [s.querySelector('h3').getBoundingClientRect().top
    - document.getElementById('settings').getBoundingClientRect().bottom, window.innerHeight - s.querySelector('figure').getBoundingClientRect().bottom]);
  assert.ok(seen.every((x) => x >= 0), `heading below the bar by ${seen[0]} px, plot above the screen's bottom by ${seen[1]} px`);
  // The clocks are beyond the lesson: the step opened their fold, in the same history entry.
  assert.equal(await ex.page.$eval('details[data-fold="long-context"]', (d) => d.open), true);
  assert.match(await ex.page.textContent('[data-live="clocks-position"]'), /^It shows position 16,384, past L_train = 8,192/);
  // Focus moved to the caption's Next button: the next Tab or Enter goes on from there.
  assert.equal(await ex.page.evaluate(() => document.activeElement?.closest('.guide-note') !== null
    && document.activeElement.matches('button[data-next]')), true);
  await ex.page.keyboard.press('Enter');
  await ex.page.waitForFunction(() => window.posencExplorer.state.scaling === 'yarn');
  assert.match(await ex.page.textContent(`${view('clocks')} .guide-note`), /^Step 4 of 4: YaRN ×4, same position/);
  await ex.page.goBack();
  await ex.page.waitForFunction(() => window.posencExplorer.state.scaling === 'none');
  await ex.page.goBack();
  await ex.page.waitForFunction(() => window.posencExplorer.state.scaling === 'llama3');
  assert.equal(await ex.page.$(`${view('clocks')} .guide-note`), null);
  assert.equal(await ex.page.getAttribute(step, 'aria-pressed'), 'false');
  assert.equal(await ex.page.$eval('details[data-fold="long-context"]', (d) => d.open), false);
  // The lesson defaults: L_train 4,096, so the same step's prose says 4,096.
  await open('#deeper=long-context');
  assert.match(await ex.page.textContent('[data-live="clocks-position"]'), /^It shows position 8,000, past L_train = 4,096/);
  assert.deepEqual(ex.problems, []);
});

test('a link with values the page refuses says which and why, and the address is corrected', async () => {
  await open('#dModel=99999&seqLen=-3&theta=abc&heads=4');
  const text = await ex.page.textContent('[data-notice="url"]');
  assert.match(text, /dModel=99999 \(d_model must be an even whole number from 2 to 4096\)/);
  assert.match(text, /seqLen=-3 \(seq_len must be a whole number from 1 to 131072\)/);
  assert.match(text, /theta=abc \(θ \(rope_theta\) must be a number from 1\.0001 to 1000000000\)/);
  assert.equal(await ex.page.evaluate(() => location.hash), '#heads=4');
  const st = await state();
  assert.deepEqual([st.dModel, st.seqLen, st.theta, st.heads], [128, 100, 10000, 4]);
  await ex.page.click('[data-notice="url"] .close');
  assert.equal(await ex.page.$('[data-notice="url"]'), null);
  // A preset the page does not have, and a key that is no setting.
  await open('#preset=gpt-9&colour=red');
  const unknown = await ex.page.textContent('[data-notice="url"]');
  assert.match(unknown, /preset=gpt-9 \(no model in the list has that id\)/);
  assert.match(unknown, /colour=red \(no setting of this page has that name\)/);
  assert.equal(await ex.page.evaluate(() => location.hash), '');
  assert.deepEqual(ex.problems, []);
});

test('a model file named in the link but not open says that it was dropped; head_dim is named for a RoPE model', async () => {
  // The link of a page that had the file open: loading its table chose it in the learned view.
  await open('#dModel=768&maxLen=1024&model=gpt2-wpe.npy&learnedSource=file');
  assert.match(await ex.page.textContent('[data-notice="dropped"]'), /read from the model file “gpt2-wpe\.npy”, which a link cannot carry/);
  assert.match(await ex.page.textContent('#settings-summary'), /gpt2-wpe\.npy \(not open\)$/);
  await drawn('learned');
  assert.match(await note('learned'), /the settings came from “gpt2-wpe\.npy”, which is not open in this page/);
  // The settings bar names the number: d_model for the lesson, head_dim for a RoPE model.
  await open();
  assert.equal(await ex.page.textContent('label[for="control-dModel"]'), 'd_model');
  await choose('llama-3.1-8b');
  assert.equal(await ex.page.textContent('label[for="control-dModel"]'), 'head_dim');
  assert.match(await ex.page.textContent('#settings-summary'), /^head_dim 128 · /);
  await choose('gpt2');
  assert.equal(await ex.page.textContent('label[for="control-dModel"]'), 'd_model');
  assert.deepEqual(ex.problems, []);
});

test('query × key maps put query 0 at the top', async () => {
  await open();
  await drawn('similarity');
  // The top row of the map is position i = 0, the bottom row the last sampled one.
  await hover('similarity', 0.5, 0.002);
  assert.match(await readout('similarity'), /^PE\(0\)·PE\(\d+\)/);
  await hover('similarity', 0.5, 0.998);
  assert.match(await readout('similarity'), /^PE\(99\)·PE\(\d+\)/);
  // And in a panel of maps: the keyboard's ArrowDown goes down a row, to the next query.
  await drawn('rope-relative');
  await ex.page.focus(`${view('rope-relative')} canvas`);
  assert.match(await readout('rope-relative'), /: i = 0, j = 1 /);
  await ex.page.keyboard.press('ArrowDown');
  assert.match(await readout('rope-relative'), /: i = 1, j = 1 /);
  assert.deepEqual(ex.problems, []);
});

// A canvas's blank rows of device pixels (nothing but the background drawn): the longest run of
// them between the first and the last row drawn on, and the runs before and after those.
const blankRows = (id) => ex.page.$eval(`${view(id)} canvas`, (c) => {
  const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
  const ink = Array.from({ length: c.height }, (_, y) => {
    for (let i = 4 * y * c.width; i < 4 * (y + 1) * c.width; i += 4) {
      if ([0, 1, 2].some((k) => Math.abs(data[i + k] - data[k]) > 8)) return true;
    }
    return false;
  });
  const first = ink.indexOf(true), last = ink.lastIndexOf(true);
  let run = 0, inside = 0;
  for (let y = first; y <= last; y++) { run = ink[y] ? 0 : run + 1; inside = Math.max(inside, run); }
  return { inside, before: first, after: c.height - 1 - last, dpr: devicePixelRatio };
});

test('the clocks fill their canvas at a desktop\'s and a phone\'s width and with few pairs; ArrowDown goes down a row', async () => {
  for (const [width, height] of [[1200, 900], [390, 844]]) {
    await ex.page.setViewportSize({ width, height });
    await open();
    await drawn('clocks');
    // No band left empty above, below or between the clocks and their caption (a line of it is 16 px).
    const rows = await blankRows('clocks');
    assert.ok(rows.inside <= 16 * rows.dpr && rows.before <= 8 * rows.dpr && rows.after <= 8 * rows.dpr,
      `${width} px: blank rows ${JSON.stringify(rows)}`);
    const across = await ex.page.evaluate(() => window.posencExplorer.views.find((v) => v.def.id === 'clocks').layout.cols);
    await ex.page.focus(`${view('clocks')} canvas`);
    assert.match(await readout('clocks'), /, pair 0:/);
    await ex.page.keyboard.press('ArrowDown');
    assert.match(await readout('clocks'), new RegExp(`, pair ${across}:`), `${width} px, ${across} clocks a row`);
  }
  await ex.page.setViewportSize({ width: 1200, height: 900 });
  // d_model 32's 16 clocks fit in one row on a desktop: drawn so, not in three rows of 6.
  await open('#dModel=32');
  await drawn('clocks');
  assert.equal(await ex.page.evaluate(() => window.posencExplorer.views.find((v) => v.def.id === 'clocks').layout.cols), 16);
  const rows = await blankRows('clocks');
  assert.ok(rows.inside <= 16 * rows.dpr && rows.after <= 8 * rows.dpr, `d_model 32: blank rows ${JSON.stringify(rows)}`);
  assert.deepEqual(ex.problems, []);
});
test('on a touch screen a tap and a finger dragging sideways move the read-out, and the hint says tap', async () => {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await page.goto(`${ex.origin}/`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
    const sel = `${view('pe-heatmap')}`;
    await page.$eval(sel, (s) => s.scrollIntoView());
    await page.waitForFunction((s) => Number(document.querySelector(s).dataset.renders ?? 0) > 0, sel);
    assert.match(await page.textContent(`${sel} .readout`), /^Tap the plot, or drag a finger across it/);
    const box = await page.locator(`${sel} canvas`).boundingBox();
    const y = box.y + box.height * 0.2;  // in the first map (a phone stacks the two)
    await page.touchscreen.tap(box.x + box.width * 0.3, y);
    const tapped = await page.textContent(`${sel} .readout`);
    assert.doesNotMatch(tapped, /^Tap the plot/);
    // A drag: touchstart, moves to the right, touchend (CDP, as a finger sends them).
    const cdp = await context.newCDPSession(page);
    const touch = (type, x) => cdp.send('Input.dispatchTouchEvent', { type, touchPoints: type === 'touchEnd' ? [] : [{ x, y }] });
    await touch('touchStart', box.x + box.width * 0.3);
    for (let k = 1; k <= 8; k++) await touch('touchMove', box.x + box.width * (0.3 + 0.05 * k));
    const during = await page.textContent(`${sel} .readout`);
    await touch('touchEnd');
    assert.notEqual(during, tapped, 'dragging moved the read-out');
    assert.ok(/pos (\d+)/.test(during) && Number(during.match(/pos (\d+)/)[1]) > Number(tapped.match(/pos (\d+)/)[1]),
      `the read-out moved right: ${tapped} → ${during}`);
    // The worked example, one row per dimension, fits the phone.
    await page.$eval(view('worked-example'), (s) => s.scrollIntoView());
    await page.waitForFunction((s) => Number(document.querySelector(s).dataset.renders ?? 0) > 0, view('worked-example'));
    assert.ok(await page.$eval(`${view('worked-example')} table`, (t) => t.getBoundingClientRect().right <= window.innerWidth),
      'the worked example is wider than the phone');
    await context.close();
  } finally {
    await browser.close();
  }
  assert.deepEqual(ex.problems, []);
});

test('the embedding view gives each map its own colour scale; the settings bar is folded until a desktop opens it', async () => {
  await open();
  await drawn('embedding');
  assert.match(await note('embedding'), /^Each map has its own colour scale/);
  // These tests' pages start with the bar opened once (launch.mjs); folding it is remembered, and so is opening it.
  assert.equal(await ex.page.getAttribute('#settings-toggle', 'aria-expanded'), 'true');
  await ex.page.click('#settings-toggle');
  await open();
  assert.equal(await ex.page.getAttribute('#settings-toggle', 'aria-expanded'), 'false');
  await ex.page.click('#settings-toggle');
  await open();
  assert.equal(await ex.page.getAttribute('#settings-toggle', 'aria-expanded'), 'true');
  // A first visit, on a desktop too, finds it folded: the lesson has the screen.
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${ex.origin}/`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
    assert.equal(await page.getAttribute('#settings-toggle', 'aria-expanded'), 'false');
  } finally {
    await browser.close();
  }
  assert.deepEqual(ex.problems, []);
});
