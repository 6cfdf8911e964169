// Interop with the REAL llama.cpp: does posenc reproduce llama.cpp's RoPE exactly?
//
// sid.sh makes (or reuses) a Debian sid chroot with Debian's libllama0 / libggml0 and gguf-py;
// models.py (run inside it) writes tiny complete GGUF models of many architectures; capture.c
// (compiled here, run inside it) runs one llama_decode per model on ONE pinned ggml CPU variant —
// libggml-cpu-x64.so (no FMA) and the variant ggml itself picks on this machine (FMA) — and
// records every GGML_OP_ROPE node: op params, corr dims, positions, freq factors, input, output.
// For every rope node this suite then compares
//   - parameters: pe.readModel(gguf).rope (or .sliding.params on sliding-window layers) →
//     pe.ggmlRopeParams(params, { seqLen: n_ctx }) against the node's op params, to float32;
//   - the pair layout: llama.cpp's mode (NORM 0 → 'interleaved', NEOX 2 / MROPE 8 / IMROPE 40 →
//     'halfSplit', M-RoPE sections) against params.layout / params.mrope;
//   - the rotation: pe.applyRope(llama.cpp's own input, { params, positions, layout: llama.cpp's
//     layout, precision: 'ggml' }) against llama.cpp's output, per CPU variant;
//   - the context shift: after a decode, llama.cpp's llama_memory_seq_rm + seq_add and one more
//     decode, whose K-shift rotates the cached keys; posenc's kvCache, given llama.cpp's own
//     unrotated keys, appended and shift()ed the same way, against those shifted keys. llama.cpp's
//     K-shift multiplies by its rope gain again (YaRN: attn_factor · (1 + 0.1 ln(1/freq_scale))),
//     posenc's keeps the gain at 1: compared with that factor applied, which the table prints;
//   - two corrupt files (a tensor offset pointing at another tensor, an offset of 7), which
//     libllama refuses and readModel must refuse too.
// and prints one table. The chroot's outputs are cached under ROOT/work/posenc-llamacpp/<hash of
// models.py, capture.c, this file's CAPTURE_VERSION, the package versions and the CPU>, so a
// rerun costs seconds. No sid chroot (not root, no mirror): "llamacpp interop: SKIPPED <why>".
//
// Run: node --test tests/llamacpp/   (as root; POSENC_SID_ROOT moves the chroot, default
// /var/tmp/posenc-sid; POSENC_LLAMACPP_FRESH=1 ignores the cache).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from 'posenc';

const here = path.dirname(fileURLToPath(import.meta.url));
const CAPTURE_VERSION = 2;   // bump when the capture runs (their arguments) change
const X64_BOUND = 2e-6;      // |posenc − llama.cpp| against libggml-cpu-x64.so (no FMA)
const FMA_BOUND = 1e-3;      // against the FMA variant: measured and printed, loosely bounded
const THREADS = Math.max(1, Math.min(4, os.availableParallelism?.() ?? os.cpus().length));

// ---- setup: the chroot, capture, the models, the captures ---------------------------------------

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, ...options });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  return r;
}

function sh(cmd, args, what) {
  const r = run(cmd, args);
  if (r.status !== 0) throw new Error(`${what} failed (${r.status}):\n${(r.stderr || r.stdout).slice(-4000)}`);
  return r.stdout;
}

const hashOf = (...parts) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 16);
};

function cpuIdentity() {
  try {
    const info = fs.readFileSync('/proc/cpuinfo', 'utf8');
    const model = /^model name\s*:\s*(.*)$/m.exec(info)?.[1] ?? '';
    const flags = /^flags\s*:\s*(.*)$/m.exec(info)?.[1] ?? '';
    return `${model}|${flags}`;
  } catch {
    return os.cpus()[0]?.model ?? '';
  }
}

function setup() {
  const t0 = Date.now();
  const s = { timings: {} };
  const sid = run('bash', [path.join(here, 'sid.sh')]);
  s.timings.sid = (Date.now() - t0) / 1000;
  const progress = sid.stdout.trim().split('\n');
  if (sid.status === 3) return { skip: (sid.stderr.trim().split('\n').pop() || 'sid.sh: no reason given').trim() };
  if (sid.status !== 0) throw new Error(`sid.sh failed (${sid.status}): ${sid.stderr.trim()}`);
  s.root = progress.pop();
  s.sidLog = progress;
  s.versions = fs.readFileSync(path.join(s.root, 'work/.posenc-sid-stamp'), 'utf8').trim();

  const sources = ['models.py', 'capture.c'].map((f) => fs.readFileSync(path.join(here, f)));
  s.key = hashOf(...sources, String(CAPTURE_VERSION), s.versions, cpuIdentity());
  const base = path.join(s.root, 'work/posenc-llamacpp');
  s.inside = `/work/posenc-llamacpp/${s.key}`;        // the work folder, as the chroot sees it
  s.work = path.join(base, s.key);                     // and as the host does
  if (process.env.POSENC_LLAMACPP_FRESH) fs.rmSync(s.work, { recursive: true, force: true });
  fs.mkdirSync(path.join(s.work, 'runs'), { recursive: true });
  for (const old of fs.readdirSync(base)) if (old !== s.key) fs.rmSync(path.join(base, old), { recursive: true, force: true });

  // capture.c: host gcc, the chroot's headers, nothing of llama.cpp linked (it dlopens them).
  const t1 = Date.now();
  const cc = run('gcc', ['-O2', '-Wall', '-Wextra', '-std=c11', '-I', path.join(s.root, 'usr/include'), '-o',
    path.join(s.work, 'capture'), path.join(here, 'capture.c'), '-ldl']);
  if (cc.status !== 0) throw new Error(`gcc capture.c failed:\n${cc.stderr}`);
  s.compilerWarnings = cc.stderr.trim();
  s.timings.compile = (Date.now() - t1) / 1000;
  const capture = (...args) => run('chroot', [s.root, `${s.inside}/capture`, ...args]);

  // The models (gguf-py inside the chroot).
  const t2 = Date.now();
  const manifestPath = path.join(s.work, 'models/manifest.json');
  if (!fs.existsSync(manifestPath)) {
    fs.copyFileSync(path.join(here, 'models.py'), path.join(s.work, 'models.py'));
    sh('chroot', [s.root, 'python3', `${s.inside}/models.py`, `${s.inside}/models`], 'models.py');
  }
  s.manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  s.timings.models = (Date.now() - t2) / 1000;

  // The CPU variants ggml has here, best first (ggml_backend_score, as ggml_backend_load_all picks).
  const variantsPath = path.join(s.work, 'variants.json');
  if (!fs.existsSync(variantsPath)) fs.writeFileSync(variantsPath, sh('chroot', [s.root, `${s.inside}/capture`, '--variants'], 'capture --variants'));
  s.scores = JSON.parse(fs.readFileSync(variantsPath, 'utf8'));
  const ranked = s.ranked = Object.entries(s.scores).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1])
    .map(([f]) => f.replace(/^libggml-cpu-|\.so$/g, ''));

  // The captures: every run of every case on x64 and on ggml's default; a default that llama.cpp
  // itself cannot run falls back to the next variant by score (recorded, and shown in the table).
  const t3 = Date.now();
  s.runs = [];
  let fresh = 0;
  for (const c of s.manifest.cases) {
    if (c.negative) {
      const out = path.join(s.work, 'runs', `${c.name}-load.json`);
      if (!fs.existsSync(out)) {
        const r = capture('--load', `${s.inside}/models/${c.file}`);
        if (r.status !== 0) throw new Error(`capture --load ${c.file} failed: ${r.stderr}`);
        fs.writeFileSync(out, r.stdout);
      }
      c.load = JSON.parse(fs.readFileSync(out, 'utf8'));
      continue;
    }
    for (const r of c.runs) {
      const args = ['--n-ctx', String(r.nCtx), '--n-tokens', String(r.nTokens), '--threads', String(THREADS)];
      if (r.positions) args.push('--positions', `${s.inside}/models/${r.positions}`);
      if (r.embd) args.push('--embd');
      if (r.shift) args.push('--shift', String(r.shift.delta), '--keep', String(r.shift.keep));
      const label = `${c.name}${r.label ? '-' + r.label : ''}`;
      for (const kind of ['x64', 'default']) {
        const tries = kind === 'x64' ? ['x64'] : ['default', ...ranked.filter((v) => v !== 'x64' && v !== ranked[0])];
        const failures = [];
        for (const variant of tries) {
          const dir = `runs/${label}-${variant}`;
          const failFile = path.join(s.work, dir + '.failed');
          if (!fs.existsSync(path.join(s.work, dir, 'nodes.json')) && !fs.existsSync(failFile)) {
            fresh++;
            const p = capture('--model', `${s.inside}/models/${c.file}`, '--out', `${s.inside}/${dir}`, '--variant', variant, ...args);
            if (p.status !== 0) {
              const why = p.stderr.split('\n').find((l) => /GGML_ASSERT|error|failed/i.test(l)) ?? p.stderr.trim().split('\n').pop();
              fs.writeFileSync(failFile, why ?? `exit ${p.status}`);
            }
          }
          if (fs.existsSync(failFile)) {
            failures.push({ variant, why: fs.readFileSync(failFile, 'utf8') });
            continue;
          }
          s.runs.push({ case: c, run: r, label, kind, variant, dir: path.join(s.work, dir), failures });
          break;
        }
        if (!s.runs.some((x) => x.label === label && x.kind === kind)) {
          s.runs.push({ case: c, run: r, label, kind, variant: null, failures });
        }
      }
    }
  }
  s.timings.captures = (Date.now() - t3) / 1000;
  s.fresh = fresh;
  s.timings.total = (Date.now() - t0) / 1000;
  return s;
}

let S;
try {
  S = setup();
} catch (e) {
  S = { error: e };
}
if (S.skip) console.log('llamacpp interop: SKIPPED ' + S.skip);
const pe = S.skip || S.error ? null : await init();

// ---- reading a capture --------------------------------------------------------------------------

function loadRun(r) {
  const meta = JSON.parse(fs.readFileSync(path.join(r.dir, 'nodes.json'), 'utf8'));
  const blob = fs.readFileSync(path.join(r.dir, 'nodes.bin'));
  const view = (span) => {
    if (!span) return null;
    const bytes = blob.buffer.slice(blob.byteOffset + span.offset, blob.byteOffset + span.offset + 4 * span.count);
    return span.type === 'i32' ? new Int32Array(bytes) : new Float32Array(bytes);
  };
  for (const n of meta.nodes) {
    n.positionsData = view(n.positions);
    n.inputData = view(n.input);
    n.outputData = view(n.output);
    n.freqFactorsData = view(n.freqFactors);
    if (n.view?.rows) n.view.rowsData = view(n.view.rows);
  }
  return meta;
}

const f32 = Math.fround;
const GGML_MODE = { 0: 'NORM', 2: 'NEOX', 8: 'MROPE', 24: 'VISION', 40: 'IMROPE' };
const isMrope = (mode) => (mode & 8) !== 0;
// ggml's pair layout: NORM rotates (x[2i], x[2i+1]); NEOX, MROPE and IMROPE (x[i], x[i + n/2]).
const layoutOf = (mode) => (mode === 0 ? 'interleaved' : 'halfSplit');
const isQuery = (n) => /^q/i.test(n.name);

// Which params a layer uses: the sliding-window layers' own where posenc reports them. LongRoPE's
// factors follow the context llama.cpp runs with (n_ctx per sequence): as the README tells a user,
// scaling.contextLength says which (readModel sets it to the file's context_length, llama.cpp's
// default n_ctx).
function paramsFor(model, c, layer, nCtx) {
  if (!model) return undefined;
  const p = c.slidingLayers.includes(layer) && model.sliding?.params ? model.sliding.params : model.rope;
  return p?.scaling?.type === 'longrope' ? { ...p, scaling: { ...p.scaling, contextLength: nCtx } } : p;
}

// How llama.cpp fed the node, and so how posenc is asked:
//   'full'   src[0] holds the whole head (ggml_rope_set_offset puts the rotated dims at an offset);
//   'parent' src[0] is a slice of each query head (DeepSeek MLA's q_pe): posenc rotates the full
//            head rows, compared on the slice, the rest must pass through;
//   'slice'  src[0] is the rope part of the compressed KV row (DeepSeek's k_pe): posenc rotates
//            that gathered slice, a [n_tokens][1][n_dims] tensor, with { headDim: n_dims,
//            rotaryOffset: 0 } — the same tensor ggml's op rotates (the rest of that row is the
//            compressed latent, not part of a key head).
function routeOf(n) {
  if (n.view?.rows && isQuery(n)) return 'parent';
  if (n.view?.rows) return 'slice';
  return 'full';
}

function describeError(e) {
  return `${e?.constructor?.name ?? 'Error'}: ${String(e?.message ?? e).split('\n')[0]}`;
}

// posenc's ggml parameters for a node against the node's own: [] when every field is equal to float32.
function paramDiffs(pe, params, node, nCtx) {
  let g;
  try {
    g = pe.ggmlRopeParams(params, { seqLen: nCtx });
  } catch (e) {
    return [`ggmlRopeParams threw ${describeError(e)}`];
  }
  const diffs = [];
  const want = {
    nDims: node.nDims, freqBase: node.freqBase, freqScale: node.freqScale, extFactor: node.extFactor,
    attnFactor: node.attnFactor,
  };
  if (g.nDims !== want.nDims) diffs.push(`nDims ${g.nDims} ≠ ${want.nDims}`);
  for (const k of ['freqBase', 'freqScale', 'extFactor', 'attnFactor']) {
    if (f32(g[k]) !== f32(want[k])) diffs.push(`${k} ${f32(g[k])} ≠ ${want[k]}`);
  }
  // ggml computes the corr dims inside the op from (n_dims, n_ctx_orig, freq_base, beta_fast,
  // beta_slow) on every node, but uses them only when ext_factor ≠ 0 (YaRN's ramp): compared then.
  const gc = g.corrDims ?? [];
  if (node.extFactor !== 0 && (f32(gc[0]) !== f32(node.corrDims[0]) || f32(gc[1]) !== f32(node.corrDims[1]))) {
    diffs.push(`corrDims [${gc.map(f32).join(', ')}] ≠ [${node.corrDims.join(', ')}] (llama.cpp's betas ${node.betaFast} / ${node.betaSlow}, n_ctx_orig ${node.nCtxOrig})`);
  }
  const ff = node.freqFactorsData;
  const half = node.nDims / 2;
  if (!ff) {
    if (g.freqFactors) diffs.push(`freqFactors: posenc has ${g.freqFactors.length}, llama.cpp none`);
  } else if (!g.freqFactors) {
    diffs.push(`freqFactors: posenc none, llama.cpp ${ff.length} (${Array.from(ff.subarray(0, 3)).join(', ')}, …)`);
  } else {
    let bad = -1;
    for (let i = 0; i < half && bad < 0; i++) if (f32(g.freqFactors[i]) !== ff[i]) bad = i;
    if (g.freqFactors.length !== half) diffs.push(`freqFactors length ${g.freqFactors.length} ≠ ${half}`);
    else if (bad >= 0) diffs.push(`freqFactors[${bad}] ${g.freqFactors[bad]} ≠ ${ff[bad]}`);
  }
  // Where the rotated dims start in the head (DeepSeek: key head − rope dims).
  if (isQuery(node) || routeOf(node) === 'full') {
    const want = node.ropeOffset || (routeOf(node) === 'parent' ? node.view.offsetInHead : 0);
    const have = params?.rotaryOffset ?? 0;
    if (have !== want) diffs.push(`rotaryOffset ${have} ≠ ${want}`);
    const head = routeOf(node) === 'parent' ? node.view.head : node.ne[0];
    if (params?.headDim !== head) diffs.push(`headDim ${params?.headDim} ≠ ${head}`);
  }
  return diffs;
}

function layoutDiffs(params, node) {
  const diffs = [];
  const want = layoutOf(node.mode);
  if (params?.layout !== want) diffs.push(`layout ${params?.layout} ≠ ${want} (ggml mode ${node.mode} ${GGML_MODE[node.mode] ?? ''})`);
  if (isMrope(node.mode)) {
    const wantSection = node.sections.slice(0, 3);
    const have = params?.mrope;
    if (!have) diffs.push(`mrope absent ≠ { section: [${wantSection}], interleaved: ${node.mode === 40} }`);
    else {
      if (JSON.stringify(Array.from(have.section ?? [])) !== JSON.stringify(wantSection)) diffs.push(`mrope.section [${have.section}] ≠ [${wantSection}]`);
      if (Boolean(have.interleaved) !== (node.mode === 40)) diffs.push(`mrope.interleaved ${have.interleaved} ≠ ${node.mode === 40}`);
      // ggml_rope_multi turns the pairs no section claims by the 4th position id (0 here).
      if (have.rest !== 'unrotated') diffs.push(`mrope.rest ${have.rest ?? 'temporal'} ≠ unrotated`);
      if (node.sections[3] !== 0) diffs.push(`llama.cpp's 4th section ${node.sections[3]} ≠ 0 (posenc takes 3)`);
    }
  } else if (params?.mrope) diffs.push(`mrope ${JSON.stringify(params.mrope)} on a ggml mode ${node.mode} node`);
  return diffs;
}

// Rotates llama.cpp's input with posenc; the worst |posenc − llama.cpp| and where it is.
function rotationDiff(pe, params, node, nTokens) {
  const T = node.ne[2], H = node.ne[1], D = node.ne[0];
  if (T !== nTokens) throw new Error(`${node.name}: ${T} tokens, the run had ${nTokens}`);
  const streams = isMrope(node.mode) ? 3 : 1;
  const pos = new Float64Array(streams * T);
  for (let i = 0; i < streams * T; i++) pos[i] = node.positionsData[i];
  const route = routeOf(node);
  let x, headDim, p = params, sliceAt = 0;
  if (route === 'parent') {
    x = node.view.rowsData;
    headDim = node.view.head;
    sliceAt = node.view.offsetInHead;
  } else {
    x = node.inputData;
    headDim = D;
    if (route === 'slice') p = { ...params, headDim: D, rotaryOffset: 0 };
  }
  const y = pe.applyRope(x, { seqLen: T, nHeads: H, headDim, params: p, positions: pos, layout: layoutOf(node.mode), precision: 'ggml' });
  let worst = 0, at = 0, passWorst = 0;
  for (let t = 0; t < T; t++) {
    for (let h = 0; h < H; h++) {
      const row = (t * H + h) * headDim;
      for (let d = 0; d < headDim; d++) {
        const inSlice = route !== 'parent' || (d >= sliceAt && d < sliceAt + D);
        const want = inSlice ? node.outputData[(t * H + h) * D + (route === 'parent' ? d - sliceAt : d)] : x[row + d];
        const diff = Math.abs(y[row + d] - want);
        if (!inSlice) passWorst = Math.max(passWorst, diff);
        if (diff > worst || Number.isNaN(diff)) {
          worst = Number.isNaN(diff) ? Infinity : diff;
          at = row + d;
        }
      }
    }
  }
  const t = Math.floor(at / (H * headDim)), h = Math.floor(at / headDim) % H, d = at % headDim;
  const where = streams === 3 ? `pos (${pos[t]}, ${pos[T + t]}, ${pos[2 * T + t]})` : `pos ${pos[t]}`;
  return { worst, where: `token ${t} ${where} head ${h} dim ${d}`, passWorst, route };
}

// The context shift of a run: per layer, llama.cpp's own unrotated keys (the first decode's Kcur
// rope input) go into a posenc kvCache at positions 0 … T-1, which then shifts as llama.cpp did;
// its keys against the K-shift node's output (the cache's cells, the rotated dims of each head),
// after multiplying posenc's by the gain llama.cpp's shift applies again (1 without YaRN).
function shiftDiff(pe, model, c, meta) {
  const { delta, keep } = meta.shift;
  let worst = 0, where = '', gain = 1, layers = 0;
  try {
    for (const ks of meta.nodes.filter((n) => n.phase === 1 && /^cache_k_l\d+/.test(n.name))) {
      const layer = Number(/^cache_k_l(\d+)/.exec(ks.name)[1]);
      const k0 = meta.nodes.find((n) => n.phase === 0 && n.name === `Kcur-${layer}`);
      if (!k0) throw new Error(`no Kcur-${layer} before the shift`);
      const [D, Hk, T] = k0.ne, W = ks.ne[0];
      const params = { ...paramsFor(model, c, layer, meta.nCtx), layout: layoutOf(k0.mode) };
      gain = ks.attnFactor * (ks.extFactor !== 0 ? 1 + 0.1 * Math.log(1 / ks.freqScale) : 1);
      const cache = pe.kvCache({ nKvHeads: Hk, headDim: D, capacity: T, rope: { params, precision: 'ggml' } });
      try {
        cache.append(k0.inputData, new Float32Array(k0.inputData.length));
        cache.shift(-delta, { keep });
        const { k, positions } = cache.read();
        if (positions.length !== T - delta) throw new Error(`${positions.length} tokens held, not ${T - delta}`);
        for (let t = 0; t < positions.length; t++) {
          const cell = t < keep ? t : t + delta;  // llama.cpp's cells keep their slots
          for (let h = 0; h < Hk; h++) {
            for (let i = 0; i < W; i++) {
              const diff = Math.abs(f32(gain * k[(t * Hk + h) * D + i]) - ks.outputData[(cell * Hk + h) * W + i]);
              if (diff > worst || Number.isNaN(diff)) {
                worst = Number.isNaN(diff) ? Infinity : diff;
                where = `layer ${layer} pos ${positions[t]} head ${h} dim ${i}`;
              }
            }
          }
        }
      } finally {
        cache.delete();
      }
      layers++;
    }
    if (layers === 0) throw new Error('no K-shift rope node was captured');
  } catch (e) {
    return { error: describeError(e) };
  }
  return { worst, where, gain };
}

// ---- the tests ----------------------------------------------------------------------------------

const rows = [];       // the summary table
const facts = [];      // llama.cpp's rope nodes, one line per distinct parameter set
const skipped = (t) => {
  if (S.skip) {
    t.skip(S.skip);
    return true;
  }
  if (S.error) {
    t.skip('setup failed');
    return true;
  }
  return false;
};

test('llamacpp: setup (sid chroot, capture.c, models, captures)', (t) => {
  if (S.skip) return t.skip(S.skip);
  if (S.error) throw S.error;
  const x64 = S.runs.find((r) => r.kind === 'x64' && r.variant);
  const def = S.runs.find((r) => r.kind === 'default' && r.variant === 'default');
  const m = x64 ? loadRun(x64) : {};
  const d = def ? loadRun(def) : {};
  console.log(`llamacpp interop: ${S.versions}; gguf-py ${S.manifest.gguf}; llama_version() ${m.llamaVersion}, ggml_version() ${m.ggmlVersion}`);
  console.log(`llamacpp interop: CPU variants pinned: no-FMA ${m.variant} (features ${Object.keys(m.features ?? {}).join(' ')}); `
    + `FMA ${d.variant} (ggml's own pick; ggml_backend_score ${Object.entries(S.scores).sort((a, b) => b[1] - a[1]).map(([f, v]) => `${f.replace(/^libggml-cpu-|\.so$/g, '')} ${v}`).join(', ')}; features ${Object.keys(d.features ?? {}).join(' ')})`);
  console.log(`llamacpp interop: work ${S.work}; setup ${S.timings.total.toFixed(1)} s (sid.sh ${S.timings.sid.toFixed(1)} s, `
    + `gcc ${S.timings.compile.toFixed(1)} s, models ${S.timings.models.toFixed(1)} s, captures ${S.timings.captures.toFixed(1)} s, ${S.fresh} run fresh)`);
  for (const l of S.sidLog) console.log(l);
  assert.ok(S.runs.length > 0, 'no captures');
});

test('llamacpp: capture.c compiles with -O2 -Wall -Wextra, no warnings', (t) => {
  if (skipped(t)) return;
  assert.equal(S.compilerWarnings, '');
});

const cases = S.manifest?.cases ?? [];
for (const c of cases) {
  if (c.negative) {
    test(`llamacpp: ${c.name}: libllama and readModel both refuse it`, async (t) => {
      if (skipped(t)) return;
      const file = path.join(S.work, 'models', c.file);
      const said = c.load.log.filter((l) => /gguf_init|error loading|failed/.test(l));
      console.log(`llamacpp interop: ${c.name}: libllama says:\n  ${said.join('\n  ')}`);
      assert.equal(c.load.loaded, false, 'libllama loaded it');
      assert.ok(said.some((l) => l.includes(`tensor '${c.negative.tensor}' has offset ${c.negative.offset}`)), 'libllama gave another reason');
      let message = null;
      try {
        await pe.readModel(file);
      } catch (e) {
        message = String(e.message);
      }
      rows.push({ case: c.name, arch: c.arch, variant: '-', params: message ? 'rejected' : 'ACCEPTED', layout: '-', worst: message ?? '' });
      console.log(`llamacpp interop: ${c.name}: readModel says: ${message ?? '(nothing: it read the file)'}`);
      assert.ok(message !== null, 'readModel accepted a file libllama refuses');
      assert.ok(message.includes(String(c.negative.offset)), `readModel's message does not name the offset ${c.negative.offset}`);
    });
    continue;
  }
  test(`llamacpp: ${c.name} (${c.arch})`, async (t) => {
    if (skipped(t)) return;
    let model = null, readError = null;
    try {
      model = await pe.readModel(path.join(S.work, 'models', c.file));
    } catch (e) {
      readError = `readModel threw ${describeError(e)}`;
    }
    const runs = S.runs.filter((r) => r.case === c);
    const loaded = runs.map((r) => ({ ...r, meta: r.variant ? loadRun(r) : null }));

    // llama.cpp's side, for the record.
    const x64 = loaded.find((r) => r.kind === 'x64' && r.meta);
    if (x64) {
      const seen = new Set();
      for (const r of loaded.filter((q) => q.kind === 'x64' && q.meta)) {
        for (const n of r.meta.nodes) {
          const key = JSON.stringify([r.run.label, n.name.replace(/-\d+$/, ''), n.nDims, n.mode, n.nCtxOrig, n.freqBase, n.freqScale, n.extFactor,
            n.attnFactor, n.betaFast, n.betaSlow, n.sections, n.ropeOffset, n.corrDims, !!n.freqFactors, routeOf(n)]);
          if (seen.has(key)) continue;
          seen.add(key);
          facts.push(`${c.name}${r.run.label ? '/' + r.run.label : ''} rope_type ${r.meta.ropeType} ${n.name}: n_dims ${n.nDims} mode ${n.mode} `
            + `n_ctx_orig ${n.nCtxOrig} base ${n.freqBase} scale ${n.freqScale} ext ${n.extFactor} attn ${n.attnFactor} `
            + `beta ${n.betaFast}/${n.betaSlow} corr [${n.corrDims}]${n.sections.some(Boolean) ? ` sections [${n.sections}]` : ''}`
            + `${n.ropeOffset ? ` offset ${n.ropeOffset}` : ''}${n.freqFactors ? ` freq_factors ${n.freqFactors.count}` : ''}`
            + ` src0 [${n.ne.slice(0, 3)}]${n.view?.rows ? ` view of ${n.view.src} +${n.view.offs} B (head ${n.view.head}, at ${n.view.offsetInHead})` : ''}`);
        }
      }
    }

    // One row per run and variant; the checks collect every node's findings.
    const byRow = [];
    for (const r of loaded) {
      const row = { case: c.name + (r.run.label ? '/' + r.run.label : ''), arch: c.arch, kind: r.kind, variant: r.variant ? path.basename(r.meta.variant).replace(/^libggml-cpu-|\.so$/g, '') : 'none', params: [], layout: [], worst: 0, where: '', errors: [] };
      if (r.variant && r.variant !== 'default' && r.kind === 'default') {
        row.variant += ` (${S.ranked[0]} failed)`;
        row.fallback = r.failures.map((f) => `${f.variant === 'default' ? S.ranked[0] : f.variant}: ${f.why}`).join('; ');
      }
      if (readError) row.errors.push(readError);
      if (!r.meta) {
        row.errors.push(`no capture: ${r.failures.map((f) => `${f.variant}: ${f.why}`).join('; ')}`);
        byRow.push(row);
        continue;
      }
      for (const n of r.meta.nodes) {
        if (n.phase === 1) continue;  // after a context shift: its own test below
        const params = paramsFor(model, c, n.layer, r.meta.nCtx);
        for (const d of paramDiffs(pe, params, n, r.meta.nCtx)) row.params.push(`${n.name}: ${d}`);
        for (const d of layoutDiffs(params, n)) row.layout.push(`${n.name}: ${d}`);
        try {
          const q = rotationDiff(pe, params, n, r.run.nTokens);
          if (q.worst >= row.worst) Object.assign(row, { worst: q.worst, where: `${n.name} ${q.where}` });
          if (q.passWorst > 0) row.errors.push(`${n.name}: dims outside the rotated slice changed by ${q.passWorst}`);
        } catch (e) {
          row.errors.push(`${n.name}: applyRope threw ${describeError(e)}`);
          row.worst = Infinity;
        }
      }
      byRow.push(row);
    }
    rows.push(...byRow);

    const dedupe = (list) => [...new Set(list)];
    await t.test('readModel reads the file', () => {
      if (readError) assert.fail(readError);
    });
    await t.test('sliding-window layers: the manifest\'s pattern is llama.cpp\'s', () => {
      for (const r of loaded.filter((q) => q.meta)) assert.deepEqual(r.meta.swaLayers, c.slidingLayers, `${r.label} ${r.variant}`);
    });
    await t.test('parameters (ggmlRopeParams vs the op params, to float32)', () => {
      const bad = dedupe(byRow.filter((r) => r.kind === 'x64').flatMap((r) => r.params));
      if (bad.length) assert.fail(bad.join('\n'));
    });
    await t.test('pair layout and M-RoPE sections', () => {
      const bad = dedupe(byRow.filter((r) => r.kind === 'x64').flatMap((r) => r.layout));
      if (bad.length) assert.fail(bad.join('\n'));
    });
    for (const r of loaded.filter((q) => q.run.shift && q.meta)) {
      const bound = r.kind === 'x64' ? X64_BOUND : FMA_BOUND;
      const k = shiftDiff(pe, model, c, r.meta);
      rows.push({ case: `${c.name}/${r.run.label} K-shift`, arch: c.arch, kind: r.kind, variant: path.basename(r.meta.variant).replace(/^libggml-cpu-|\.so$/g, ''),
        params: '-', layout: '-', worst: k.error ? `— ${k.error.slice(0, 90)}` : `${k.worst.toExponential(2)} at ${k.where}; llama.cpp's gain ${k.gain.toFixed(4)}` });
      await t.test(`context shift (seq_rm [${r.run.shift.keep}, ${r.run.shift.keep + r.run.shift.delta}) + seq_add -${r.run.shift.delta}) vs ${r.kind === 'x64' ? 'no-FMA' : 'FMA'}: |Δ| ≤ ${bound.toExponential(0)}`, () => {
        if (k.error) assert.fail(k.error);
        assert.ok(k.worst <= bound, `worst |posenc · gain − llama.cpp| = ${k.worst} at ${k.where}`);
      });
    }
    for (const r of byRow) {
      const bound = r.kind === 'x64' ? X64_BOUND : FMA_BOUND;
      await t.test(`rotation vs ${r.kind === 'x64' ? 'no-FMA' : 'FMA'} ${r.variant}${r.case.includes('/') ? ' ' + r.case.split('/')[1] : ''}: |Δ| ≤ ${bound.toExponential(0)}`, () => {
        if (r.errors.length) assert.fail(r.errors.join('\n'));
        assert.ok(r.worst <= bound, `worst |posenc − llama.cpp| = ${r.worst} at ${r.where}`);
      });
    }
  });
}

// "no: corrDims, attnFactor" from a list of "node: field …" findings.
function fieldsCell(list) {
  if (list.length === 0) return 'yes';
  const fields = list.map((d) => {
    const what = d.replace(/^[^:]+: /, '');
    if (/threw/.test(what)) return what.replace(/^(\w+) threw \w+: (?:\w+: )?/, 'threw: ').slice(0, 60);
    return what.split(/[ [(]/)[0];
  });
  return `no: ${[...new Set(fields)].join(', ')}`;
}

test('llamacpp: summary', (t) => {
  if (skipped(t)) return;
  console.log('\nllama.cpp rope nodes (x64 captures, one line per distinct parameter set):');
  for (const f of facts) console.log('  ' + f);
  const table = rows.map((r) => [r.case, r.arch, r.variant, Array.isArray(r.params) ? fieldsCell(r.params) : r.params,
    Array.isArray(r.layout) ? fieldsCell(r.layout) : r.layout,
    typeof r.worst === 'string' ? r.worst.slice(0, 100)
      : r.errors?.length ? `— ${r.errors[0].replace(/^[^:]+: /, '').slice(0, 90)}` : `${r.worst.toExponential(2)} at ${r.where}`]);
  const head = ['case', 'arch', 'variant', 'params equal', 'layout equal', 'worst |Δ| (where)'];
  const width = head.map((h, i) => Math.max(h.length, ...table.map((r) => String(r[i]).length)));
  const fmt = (r) => r.map((v, i) => (i === r.length - 1 ? String(v) : String(v).padEnd(width[i]))).join(' | ');
  console.log('\nllamacpp interop: posenc vs llama.cpp (' + (S.versions ?? '') + ')');
  console.log(fmt(head));
  console.log(width.map((w) => '-'.repeat(w)).join('-|-'));
  for (const r of table) console.log(fmt(r));
  const notes = rows.filter((r) => r.fallback).map((r) => `  ${r.case} ${r.variant}: ${r.fallback}`);
  if (notes.length) console.log('\nFMA variants llama.cpp could not run (the next one by ggml_backend_score was used):\n' + notes.join('\n'));
  const details = rows.filter((r) => Array.isArray(r.params) && r.kind === 'x64' && (r.params.length || r.layout.length));
  if (details.length) {
    console.log('\nWhat differs (x64 runs, first three findings per case):');
    for (const r of details) {
      const found = [...new Set([...r.params, ...r.layout])].slice(0, 3).map((d) => (d.length > 160 ? d.slice(0, 157) + '…' : d));
      console.log(`  ${r.case}: ${found.join(' | ')}`);
    }
  }
});
