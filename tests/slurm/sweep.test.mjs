// The lab's sweep split into shards (scripts/lab-sweep.sh, posenc_lab --shard / --merge) against the
// same sweep in one process: the merged JSON must equal it but for the date and the timings.
// 1. shards as plain processes, as GNU parallel or a Kubernetes indexed job would run them;
// 2. on a real one-node Slurm cluster (scripts/slurm-cluster.sh: munged, slurmctld, slurmd), as a
//    job array and a dependent merge job: as root only, SKIPPED otherwise.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const LAB = resolve(ROOT, process.env.POSENC_LAB ?? 'build/native-debug/posenc_lab');
const SWEEP = join(ROOT, 'scripts/lab-sweep.sh');
// Two tasks at the tiny size, three schemes × two seeds (6 jobs a run), a few steps: seconds.
const SPEC = {
  LAB_SWEEP_DIR: 'out',
  LAB_SWEEP_TASKS: 'markov,copy',
  LAB_SWEEP_SIZES: 'tiny',
  LAB_SWEEP_ARGS: '--schemes rope,alibi,fire --seeds 2 --steps 4 --train-len 8 --batch 4',
  POSENC_LAB: LAB,
};
const RUNS = ['markov-tiny', 'copy-tiny'];
const TIMINGS = ['trainSeconds', 'stepsPerSecond'];

const env = (extra = {}) => ({ ...process.env, ...SPEC, ...extra });
const sweep = (cwd, ...args) => execFileSync('bash', [SWEEP, ...args], { cwd, env: env(), encoding: 'utf8' });
const read = (path) => JSON.parse(readFileSync(path, 'utf8'));

// A result file without what may differ between two runs of one sweep: the date and the timings.
function settled(path) {
  const j = read(path);
  delete j.date;
  for (const r of j.results) for (const t of TIMINGS) delete r[t];
  return j;
}

// The sweep in one process per run, in `cwd`/out: the reference the shards must reproduce.
function oneProcess(cwd) {
  for (const run of RUNS) {
    const [task, size] = run.split('-');
    execFileSync(LAB, ['--task', task, '--size', size, ...SPEC.LAB_SWEEP_ARGS.split(' '), '--out', `out/${run}.json`],
      { cwd, stdio: 'ignore' });
  }
}

function assertSameAsOneProcess(dir, refDir) {
  for (const run of RUNS) {
    const merged = settled(join(dir, 'out', `${run}.json`)), ref = settled(join(refDir, 'out', `${run}.json`));
    assert.equal(merged.results.length, 6, `${run}: 3 schemes × 2 seeds`);
    // Bit for bit: the same text once date and timings are gone (key order is the writer's).
    assert.equal(JSON.stringify(merged), JSON.stringify(ref), `${run}: merged shards differ from one process`);
  }
}

let refDir;
before(() => {
  assert.ok(existsSync(LAB), `${LAB} is missing: scripts/build.sh native builds it`);
  refDir = mkdtempSync(join(tmpdir(), 'posenc-sweep-ref-'));
  execFileSync('mkdir', ['-p', join(refDir, 'out')]);
  oneProcess(refDir);
});

test('sweep: three shards as plain processes merge into the one-process JSON', () => {
  const dir = mkdtempSync(join(tmpdir(), 'posenc-sweep-'));
  try {
    for (const k of [2, 0, 1]) sweep(dir, 'shard', String(k), '3');
    const shard = read(join(dir, 'out/markov-tiny/shard-1.json'));
    assert.deepEqual(shard.shard, { index: 1, count: 3, jobs: 6 });
    assert.deepEqual(shard.results.map((r) => r.job), [1, 4], 'shard 1 of 3 trains jobs 1 and 4');
    sweep(dir, 'merge', '3');
    assertSameAsOneProcess(dir, refDir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sweep: --merge refuses a missing shard, a shard of another sweep and a job in the wrong shard', () => {
  const dir = mkdtempSync(join(tmpdir(), 'posenc-sweep-bad-'));
  const merge = (...files) => spawnSync(LAB, ['--merge', files.join(','), '--out', 'm.json'], { cwd: dir, encoding: 'utf8' });
  try {
    for (const k of [0, 1]) sweep(dir, 'shard', String(k), '2');
    const [s0, s1] = [0, 1].map((k) => `out/markov-tiny/shard-${k}.json`);
    let r = merge(s0);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /the sweep was split into 2 shards; 1 given/);
    r = merge(s0, `out/copy-tiny/shard-1.json`);
    assert.match(r.stderr, /are not shards of one sweep: their "command" differ/);
    const moved = read(join(dir, s1));
    moved.results[0].job = 2;  // an even job belongs to shard 0
    writeFileSync(join(dir, 'moved.json'), JSON.stringify(moved));
    r = merge(s0, 'moved.json');
    assert.match(r.stderr, /holds job 2, not one of shard 1's/);
    r = merge(s0, s0);
    assert.match(r.stderr, /shard 0 given twice/);
    assert.equal(existsSync(join(dir, 'm.json')), false, 'nothing written on a refusal');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Root, and Debian's slurmctld, slurmd, munge (scripts/bootstrap.sh installs them).
function slurmSkipReason() {
  if (process.getuid?.() !== 0) return 'needs root to start munged, slurmctld and slurmd';
  for (const c of ['sbatch', 'slurmctld', 'slurmd', 'munged'])
    if (spawnSync('sh', ['-c', `command -v ${c}`]).status !== 0) return `${c} is not installed (scripts/bootstrap.sh)`;
  return null;
}

test('sweep: a Slurm job array of three shards and its dependent merge give the one-process JSON', (t) => {
  const reason = slurmSkipReason();
  if (reason) {
    console.log(`slurm: SKIPPED (${reason})`);
    t.skip(reason);
    return;
  }
  const cluster = mkdtempSync(join(tmpdir(), 'posenc-slurm-'));
  const dir = mkdtempSync(join(tmpdir(), 'posenc-sweep-slurm-'));
  const slurmConf = join(cluster, 'slurm.conf');
  try {
    execFileSync('bash', [join(ROOT, 'scripts/slurm-cluster.sh'), 'start', cluster], { stdio: 'inherit' });
    const out = execFileSync('bash', [SWEEP, 'submit', '3', '--wait'],
      { cwd: dir, env: env({ SLURM_CONF: slurmConf }), encoding: 'utf8', timeout: 600_000 });
    console.log(out.trim());
    assert.match(out, /job array \d+ \(3 tasks\)/);
    for (const k of [0, 1, 2]) assert.ok(existsSync(join(dir, `out/markov-tiny/shard-${k}.json`)), `shard ${k} written`);
    assertSameAsOneProcess(dir, refDir);
    // The array really ran as Slurm array tasks: each shard's log is Slurm's --output file.
    assert.match(readFileSync(join(dir, 'out/shard-2.log'), 'utf8'), /lab: shard 2\/3: 2 of the 6 jobs/);
  } finally {
    spawnSync('bash', [join(ROOT, 'scripts/slurm-cluster.sh'), 'stop', cluster], { stdio: 'inherit' });
    rmSync(dir, { recursive: true, force: true });
    rmSync(cluster, { recursive: true, force: true });
  }
});
