// The lesson's worked example: the sinusoidal vectors of positions 0, 1 and 5 at d_model 8, base
// 10000, one row per dimension (so it fits a phone), every number from the package (chapter
// "sinusoidal"). The lesson misprints position 5: the errata list (web/page/errata.js) says how.
import { csvLines } from './shared/numbers.js';

const D = 8, POSITIONS = [0, 1, 5], BASE = 10000;

export default {
  id: 'worked-example',
  table: true,
  compute: ({ pe }) => ({ rows: pe.sinusoidal(POSITIONS.length, D, { base: BASE, positions: POSITIONS }) }),
  render(d) {
    const head = POSITIONS.map((p) => `<th scope="col">pos ${p}</th>`).join('');
    const body = Array.from({ length: D }, (_, k) => {
      const i = k >> 1;
      const omega = 1 / BASE ** ((2 * i) / D);
      const cells = POSITIONS.map((_, r) => `<td class="num">${d.rows[r * D + k].toFixed(3)}</td>`).join('');
      return `<tr><th scope="row">dim ${k}: ${k % 2 ? 'cos' : 'sin'}(pos·${omega})</th>${cells}</tr>`;
    }).join('');
    return `<table class="worked"><thead><tr><th scope="col">dimension = sin or cos(pos·ω<sub>i</sub>)</th>${head}</tr>`
      + `</thead><tbody>${body}</tbody></table>`;
  },
  csv: (d) => csvLines(['dim', ...POSITIONS.map((p) => `pos_${p}`)],
    Array.from({ length: D }, (_, k) => [k, ...POSITIONS.map((_, r) => d.rows[r * D + k])])),
  caption: () => `sinusoidal worked example d_model=${D} base=${BASE} positions=${POSITIONS.join(',')}`,
};
