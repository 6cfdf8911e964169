// A bundled app using the posenc package as users would: import, init, compute. `?threads=2` asks
// for the threaded build (the page must be crossOriginIsolated) and checks that causal attention
// large enough to be split over threads equals the single-threaded build's, bit for bit.
import { init } from 'posenc';

const threads = Number(new URLSearchParams(location.search).get('threads') ?? 1);
const pe = await init({ threads });
let text = `${pe.simdArch} ${pe.sinusoidal(2, 2)[2]}`;
if (threads > 1) {
  const single = await init();
  const n = 200 * 4 * 32, x = Float32Array.from({ length: n }, (_, i) => Math.sin(i));
  const o = { nHeads: 4, headDim: 32, causal: true };
  const a = pe.attention(x, x, x, o), b = single.attention(x, x, x, o);
  text += ` threads ${pe.threads} ${a.every((y, i) => Object.is(y, b[i])) ? 'same' : 'different'}`;
}
document.querySelector('#out').textContent = text;
document.body.dataset.ready = 'true';
