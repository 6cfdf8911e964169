// Docs that run: every ```js and ```cpp block of README.md and docs/ (schemes/ included) is run or
// compiled as it is written, so an example cannot drift from the package.
//
// * A JS block runs as an ES module of its own in Node, importing the package by its name (the
//   repository's own package.json). One that does not set up `pe` itself runs after
//   `import { init } from 'posenc'; const pe = await init();` — what every page's first example
//   does; anything else it uses it must declare.
// * Its result comments are checked: a line `expr; // <value>` whose comment is a number (alone, or
//   followed by `=`, `(`, `,` …), a [list] of numbers (a typed array's name may come first), a
//   'string', true or false, or `RangeError: …` / `TypeError: …` (the message's start) must give
//   that value (to the digits shown) or throw that.
// * A C++ block is compiled (g++ -std=c++17 -fsyntax-only against cpp/include and cpp/lab/include):
//   as it is when it has a main(), else its #include and using lines first and the rest as main()'s body.
// * `<!-- docs-test: fragment, <why> -->` on the line before a block skips it, printing SKIPPED
//   and why; `<!-- docs-test: continues -->` runs a block after the one before it, in one module.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const work = join(root, 'build', 'docs-blocks');  // inside the package, so 'posenc' resolves to it
const LANGS = { js: 'js', javascript: 'js', cpp: 'cpp' };

/** The fenced blocks of a page: { page, line, lang, code, note } (note: its docs-test comment). */
function blocksOf(page, text) {
  const lines = text.split('\n'), found = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w+)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    if (LANGS[open[2]]) {
      const indent = open[1].length;
      const note = /<!--\s*docs-test:\s*(.*?)\s*-->/.exec(lines[i - 1] ?? '')?.[1];
      found.push({ page, line: i + 1, lang: LANGS[open[2]], code: lines.slice(i + 1, end).map((l) => l.slice(indent)).join('\n'), note });
    }
    i = end;
  }
  return found;
}

const pages = ['README.md', ...(await readdir(join(root, 'docs'), { recursive: true })).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`).sort()];
const blocks = (await Promise.all(pages.map(async (p) => blocksOf(p, await readFile(join(root, p), 'utf8'))))).flat();

// `expr; // <value>` lines → checks (see the top of this file); other lines as they are.
function withChecks(code) {
  return code.split('\n').map((line, i) => {
    const m = /^(\s*)([^/;]+?);\s*\/\/\s*(.+)$/.exec(line);
    if (!m || /^\s*(const|let|var|for|if|return|await\s+using)\b/.test(m[2])) return line;
    const [, pad, expr, said] = m;
    const error = /^(RangeError|TypeError): (.+?)(;|$)/.exec(said);
    if (error) return `${pad}__throws(() => ${expr}, ${error[1]}, ${JSON.stringify(error[2])}, ${i + 1});`;
    const str = /^'([^']*)'/.exec(said);
    if (str) return `${pad}__equal(${expr}, ${JSON.stringify(str[1])}, ${i + 1});`;
    const bool = /^(true|false)\b/.exec(said);
    if (bool) return `${pad}__equal(${expr}, ${bool[1]}, ${i + 1});`;
    const list = /^(?:[A-Z]\w+Array )?\[([-\d.e, ]+)\](?!\[)/.exec(said);  // not a shape: [3][768]
    if (list) return `${pad}__close(${expr}, [${list[1]}], ${JSON.stringify(list[1].split(',').map((s) => s.trim()))}, ${i + 1});`;
    const num = /^(-?\d[\d.]*(?:e-?\d+)?)(?=$|\s*[=(;,—])/.exec(said);  // '16 tokens: …' is prose
    if (num) return `${pad}__close([${expr}], [${num[1]}], [${JSON.stringify(num[1])}], ${i + 1});`;
    return line;
  }).join('\n');
}

// What the checks call (prepended to every JS block).
const CHECKS = `
const __fail = (line, what) => { throw new Error(\`result comment on line \${line} of the block: \${what}\`); };
function __close(got, want, shown, line) {
  const g = Array.from(got, Number);
  if (g.length !== want.length) __fail(line, \`\${g.length} values, the comment shows \${want.length}\`);
  g.forEach((x, k) => {
    const digits = (shown[k].split('e')[0].split('.')[1] ?? '').length;  // the precision the comment shows
    if (!(Math.abs(x - want[k]) <= 0.5 * 10 ** -digits * (shown[k].includes('e') ? 10 ** Number(shown[k].split('e')[1]) : 1) * 1.0001)) {
      __fail(line, \`value \${k} is \${x}, the comment shows \${shown[k]}\`);
    }
  });
}
function __equal(got, want, line) { if (got !== want) __fail(line, \`got \${JSON.stringify(got)}, the comment shows \${JSON.stringify(want)}\`); }
function __throws(call, type, start, line) {
  try { call(); } catch (e) {
    if (!(e instanceof type) || !e.message.startsWith(start)) __fail(line, \`threw \${e.name}: \${e.message}\`);
    return;
  }
  __fail(line, 'nothing was thrown');
}
`;

// The JS modules to run: each block, or a run of blocks joined by `continues`.
function modules() {
  const out = [];
  for (const b of blocks.filter((x) => x.lang === 'js')) {
    const last = out.at(-1);
    if (b.note === 'continues' && last?.page === b.page) last.parts.push(b);
    else out.push({ page: b.page, line: b.line, note: b.note, parts: [b] });
  }
  return out;
}

await rm(work, { recursive: true, force: true });
await mkdir(work, { recursive: true });

for (const m of modules()) {
  const name = `${m.page}:${m.line}${m.parts.length > 1 ? ` (+ ${m.parts.length - 1} continuing)` : ''}`;
  const fragment = m.note?.startsWith('fragment') ? m.note : null;
  test(`docs: the JS block at ${name} runs`, { skip: fragment ? `SKIPPED: ${fragment}` : false }, async () => {
    const code = m.parts.map((p) => withChecks(p.code)).join('\n');
    const prelude = /\b(const|let)\s+pe\b/.test(code) ? '' : "import { init } from 'posenc';\nconst pe = await init();\n";
    const file = join(work, `${m.page.replace(/[/.]/g, '_')}_${m.line}.mjs`);
    await writeFile(file, `${prelude}${CHECKS}\n${code}\n`);
    await run(process.execPath, ['--no-warnings', file], { cwd: root, timeout: 180000 }).catch((e) => {
      assert.fail(`${name}: ${e.stderr || e.message}`);
    });
  });
}

for (const b of blocks.filter((x) => x.lang === 'cpp')) {
  const fragment = b.note?.startsWith('fragment') ? b.note : null;
  test(`docs: the C++ block at ${b.page}:${b.line} compiles`, { skip: fragment ? `SKIPPED: ${fragment}` : false }, async () => {
    let source = b.code;
    if (!/\bint main\s*\(/.test(source)) {
      const lines = source.split('\n');
      const head = lines.filter((l) => /^\s*(#include|using namespace)/.test(l));
      source = `${head.join('\n')}\nint main() {\n${lines.filter((l) => !head.includes(l)).join('\n')}\n}\n`;
    }
    const file = join(work, `${b.page.replace(/[/.]/g, '_')}_${b.line}.cpp`);
    await writeFile(file, source);
    await run('g++', ['-std=c++17', '-fsyntax-only', '-I', join(root, 'cpp/include'), '-I', join(root, 'cpp/lab/include'), file])
      .catch((e) => assert.fail(`${b.page}:${b.line}:\n${e.stderr}`));
  });
}
