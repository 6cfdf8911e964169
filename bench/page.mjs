// The explorer's redraw while a slider drags, against a 60 Hz frame (16 ms): the sinusoidal heatmap at
// head_dim 128, seq_len 2048 in headless Debian Chromium, each drag step one redraw measured by the
// page's own scheduler (performance.measure 'frame': compute + draw of the visible views). Beside it,
// in the same page and run, the baseline a competent user would write: the same table with
// Math.sin/Math.cos, nearest-sampled to the canvas's pixels through a 256-colour LUT, putImageData.
// Used by bench/run.mjs (full and --smoke); the browser test of the same drag judges no time.
import { openExplorer } from '../tests/browser/launch.mjs';
import { median } from './measure.mjs';

const quantile = (a, q) => { const s = [...a].sort((x, y) => x - y); return s[Math.max(0, Math.ceil(s.length * q) - 1)]; };

export async function pageBench({ smoke }) {
  const steps = smoke ? 5 : 60;
  const ex = await openExplorer();
  try {
    const { page } = ex;
    await page.goto(`${ex.origin}/#dModel=128&seqLen=2048`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
    await page.$eval('section[data-view="pe-heatmap"]', (s) => s.scrollIntoView());
    await page.waitForSelector('section[data-view="pe-heatmap"][data-renders]');
    const slider = 'input[type="range"][data-for="base"]';
    const drag = async (from, n) => {
      for (let i = 0; i < n; i++) {
        await page.$eval(slider, (el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', { bubbles: true })); }, from + i * 5);
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      }
    };
    await drag(200, 10);  // warm-up: the first redraws also compile code
    await page.evaluate(() => performance.clearMeasures('frame'));
    await drag(300, steps);
    // A view slower than the scheduler's HEAVY (30 ms; a busy machine can make it so) waits for the
    // drag to pause (SETTLE, 180 ms; web/page/scheduler.js): wait for that pause, so that the redraw it
    // then gets is measured too. A fast view has drawn every step, and the pause draws nothing more.
    await page.waitForTimeout(400);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const frames = await page.evaluate(() => performance.getEntriesByName('frame').map((e) => e.duration));
    if (!frames.length) throw new Error('explorer drag: the page measured no redraw (performance "frame") during or after the drag');
    const plain = await page.evaluate(({ n }) => {
      const seqLen = 2048, dModel = 128;
      const shown = document.querySelector('section[data-view="pe-heatmap"] canvas');
      const canvas = document.createElement('canvas');
      canvas.width = shown.width;
      canvas.height = shown.height;
      document.body.append(canvas);
      const ctx = canvas.getContext('2d');
      const lut = Uint32Array.from({ length: 256 }, (_, k) => (0xff << 24) | (k << 16) | ((255 - k) << 8) | k);
      const times = [];
      for (let r = 0; r < n + 10; r++) {
        const t0 = performance.now();
        const base = 200 + r * 5, table = new Float32Array(seqLen * dModel);
        for (let i = 0; i < dModel / 2; i++) {
          const inv = base ** (-(2 * i) / dModel);
          for (let pos = 0; pos < seqLen; pos++) {
            table[pos * dModel + 2 * i] = Math.sin(pos * inv);
            table[pos * dModel + 2 * i + 1] = Math.cos(pos * inv);
          }
        }
        const w = canvas.width, h = Math.min(canvas.height, dModel);
        const image = ctx.createImageData(w, h), px = new Uint32Array(image.data.buffer);
        for (let x = 0; x < w; x++) {
          const pos = Math.min(seqLen - 1, Math.floor((x * seqLen) / w));
          for (let y = 0; y < h; y++) {
            const v = table[pos * dModel + Math.floor((y * dModel) / h)];
            px[(h - 1 - y) * w + x] = lut[Math.max(0, Math.min(255, Math.round((v + 1) * 127.5)))];
          }
        }
        ctx.putImageData(image, 0, 0);
        if (r >= 10) times.push(performance.now() - t0);
      }
      canvas.remove();
      return times;
    }, { n: steps });
    return {
      frames: frames.length,
      page: { median: median(frames), p95: quantile(frames, 0.95) },
      plain: { median: median(plain), p95: quantile(plain, 0.95) },
      problems: ex.problems,
    };
  } finally {
    await ex.close();
  }
}
