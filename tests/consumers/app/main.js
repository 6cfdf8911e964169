// A bundled app using the posenc package as users would: import, init, compute.
import { init } from 'posenc';

const pe = await init();
document.querySelector('#out').textContent = `${pe.simdArch} ${pe.sinusoidal(2, 2)[2]}`;
document.body.dataset.ready = 'true';
