// The benchmark's clock: warm-up rounds, then rounds in which every contender runs once
// (interleaved, so a slow spell of the machine hits all of them), medians in ms.
export const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };

export async function measure(contenders, { warmup, rounds }) {
  const names = Object.keys(contenders);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < warmup + rounds; r++) {
    for (const n of names) {
      const t0 = performance.now();
      await contenders[n]();
      const t = performance.now() - t0;
      if (r >= warmup) times[n].push(t);
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(times[n])]));
}
