// The lab's fourth task in headless Debian Chromium: with the task `text` chosen, the lab chapter
// shows the shipped run on English (data/lab-result-text.json, 5 seeds on
// data/kjv-genesis-joshua.txt) — its date and command, a note that says what the text task is and
// what its numbers are not, and the table's means checked against the file, read here — and the
// page fetches that file only once the chapter's views need it, and once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { explorerSession } from './launch.mjs';

const shipped = JSON.parse(await readFile(new URL('../../data/lab-result-text.json', import.meta.url), 'utf8'));
const ex = explorerSession();
const { view, drawn } = ex;
const requests = [];  // the lab's data files fetched: data/lab-*.json, a hashed asset in the production build
const isTextRun = (path) => /\/lab-result-text(-[\w-]{8})?\.json$/.test(path);

before(async () => {
  await ex.start();
  ex.page.on('request', (r) => { if (/\/lab-[^/]*\.json$/.test(new URL(r.url()).pathname)) requests.push(new URL(r.url()).pathname); });
});
after(async () => ex.close && ex.close());

// The mean over the seeds of a scheme's loss at a length, as the table shows it (4 digits).
function meanLoss(scheme, length) {
  const losses = shipped.results.filter((r) => r.scheme === scheme)
    .map((r) => r.eval.find((e) => e.length === length && e.ropeScaling === 'none').loss);
  assert.equal(losses.length, shipped.config.seeds, `${scheme}: one row per seed`);
  return losses.reduce((a, b) => a + b, 0) / losses.length;
}

test('the shipped text run is every scheme × 5 seeds on the shipped corpus, its path not machine-specific', () => {
  assert.equal(shipped.task, 'text');
  assert.equal(shipped.config.seeds, 5);
  assert.match(shipped.command, /--task text --text data\/kjv-genesis-joshua\.txt\b/);
  assert.doesNotMatch(shipped.command, /\/work\/|\/home\/|\/tmp\//);
  const schemes = [...new Set(shipped.results.map((r) => r.scheme))];
  assert.ok(schemes.length >= 11, `${schemes}`);
  for (const s of ['none', 'sinusoidal', 'rope', 'alibi', 't5', 'kerple_log', 'fire', 'cope']) assert.ok(schemes.includes(s), s);
});

test('task text: the lab shows the shipped text run, explained, fetched once its chapter opens', async () => {
  await ex.open('#labTask=text');
  assert.equal((await ex.state()).labTask, 'text');
  await ex.page.waitForTimeout(1500);  // what loads before the reader reaches the lab
  assert.deepEqual(requests, [], 'the lab\'s data loaded before its chapter');
  await drawn('lab-extrapolation');
  await ex.page.waitForFunction((date) => document.querySelector('section[data-view="lab-extrapolation"] .lab-source')
    ?.textContent.includes(date), shipped.date, { timeout: 15000 });
  const source = await ex.page.textContent(`${view('lab-extrapolation')} .lab-source`);
  assert.match(source, /\(text, d_model 64, 2 layers, 4 heads, T_train 64, batch 16, 2000 steps, seeds 1–5\)/);
  assert.ok(source.includes(shipped.command.replace(/ --$/, '')), source);
  // The schemes a later command added (the file's `added`): their date and command too.
  for (const a of shipped.added ?? []) {
    assert.ok(source.includes(`added ${a.date}: ${a.command.replace(/ --$/, '')}`), source);
  }
  const note = await ex.page.textContent(`${view('lab-extrapolation')} .note`);
  assert.match(note, /text is character level: .*King James Bible, Genesis to Joshua/);
  assert.match(note, /no floor .* no held-out split/);
  // The numbers are the file's: the mean of the five seeds at T_train and 4 T_train.
  const T = shipped.config.trainLength;
  for (const scheme of ['sinusoidal', 'rope', 'alibi']) {
    const row = await ex.page.$$eval(`${view('lab-extrapolation')} tr[data-lab-row="${scheme}"] td`,
      (cells) => cells.map((c) => c.firstChild?.textContent ?? ''));
    assert.equal(row[1], meanLoss(scheme, T).toFixed(4), `${scheme} at ${T}`);
    assert.equal(row[3], meanLoss(scheme, 4 * T).toFixed(4), `${scheme} at ${4 * T}`);
  }
  assert.equal(requests.filter(isTextRun).length, 1, `${requests}`);
  assert.deepEqual(ex.problems, []);
});

test('markov and back to text: the text run comes back without a second fetch', async () => {
  const source = () => ex.page.textContent(`${view('lab-extrapolation')} .lab-source`);
  const markov = JSON.parse(await readFile(new URL('../../data/lab-result.json', import.meta.url), 'utf8'));
  for (const [task, date] of [['markov', markov.date], ['text', shipped.date]]) {
    await ex.page.selectOption('#control-labTask', task);
    await ex.page.$eval(view('lab-extrapolation'), (el) => el.scrollIntoView());
    await ex.page.waitForFunction((d) => document.querySelector('section[data-view="lab-extrapolation"] .lab-source')
      ?.textContent.includes(d), date, { timeout: 15000 });
    assert.match(await source(), new RegExp(`\\(${task}, d_model 64`));
  }
  assert.equal(requests.filter(isTextRun).length, 1, `${requests}`);
  assert.deepEqual(ex.problems, []);
});
