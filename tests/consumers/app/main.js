// A bundled app using the posenc package as users would: import, init, compute. `?threads=2` asks
// for the threaded build (the page must be crossOriginIsolated) and checks that causal attention
// large enough to be split over threads equals the single-threaded build's, bit for bit; `?worker`
// checks the same attention through initWorker (a module Web Worker the bundler must ship).
import { init, initWorker } from 'posenc';

const params = new URLSearchParams(location.search);
const threads = Number(params.get('threads') ?? 1);
const pe = await init({ threads });
let text = `${pe.simdArch} ${pe.sinusoidal(2, 2)[2]}`;
const n = 200 * 4 * 32, x = Float32Array.from({ length: n }, (_, i) => Math.sin(i));
const o = { nHeads: 4, headDim: 32, causal: true };
const same = (a, b) => (a.every((y, i) => Object.is(y, b[i])) ? 'same' : 'different');
if (threads > 1) {
  const single = await init();
  text += ` threads ${pe.threads} ${same(pe.attention(x, x, x, o), single.attention(x, x, x, o))}`;
}
if (params.has('worker')) {
  const pw = await initWorker();
  text += ` worker ${same(await pw.attention(x, x, x, o), pe.attention(x, x, x, o))}`;
  pw.terminate();
}
document.querySelector('#out').textContent = text;
document.body.dataset.ready = 'true';
