// The rule "no function over 100 lines in cpp/, js/ or web/" (docs/contributing.md), checked: JS
// through TypeScript's parser (every function, method and arrow function, nested ones too), C++
// by its braces once comments, strings and preprocessor lines are gone (a function is a brace
// block whose head has a parameter list and that is not inside another function). Tests and the
// llama.cpp capture tool are aside, as the rule says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');
const LIMIT = 100;

function filesUnder(dir, pattern) {
  const out = [];
  for (const f of readdirSync(join(ROOT, dir))) {
    const p = join(dir, f);
    if (statSync(join(ROOT, p)).isDirectory()) out.push(...filesUnder(p, pattern));
    else if (pattern.test(f)) out.push(p);
  }
  return out;
}

// [{ name, line, lines }] of every JS function in `text`.
function jsFunctions(text, file = 'x.js') {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const out = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const name = node.name?.getText(source) ?? ts.SyntaxKind[node.kind];
      const first = lineOf(node.getStart(source)), last = lineOf(node.end);
      out.push({ name, line: first, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

// C++ text with comments, string and character literals (raw strings too) and preprocessor lines
// blanked, newlines kept.
function stripCpp(text) {
  text = text.split('\n').map((l) => (l.trimStart().startsWith('#') ? '' : l)).join('\n');
  let out = '';
  for (let i = 0; i < text.length;) {
    const rest = text.slice(i, i + 20);
    const raw = /^R"([^(]*)\(/.exec(rest);
    let end = -1;
    if (text.startsWith('//', i)) end = text.indexOf('\n', i);
    else if (text.startsWith('/*', i)) end = text.indexOf('*/', i) + 2;
    else if (raw) end = text.indexOf(`)${raw[1]}"`, i) + raw[1].length + 2;
    else if (text[i] === '"' || (text[i] === "'" && !/\w/.test(text[i - 1] ?? ''))) {
      end = i + 1;
      while (end < text.length && text[end] !== text[i]) end += text[end] === '\\' ? 2 : 1;
      end += 1;
    }
    if (end < 0) { out += text[i]; i += 1; continue; }
    if (end <= i) end = text.length;
    out += '""' + text.slice(i, end).replace(/[^\n]/g, '');
    i = end;
  }
  return out;
}

// [{ name, line, lines }] of every C++ function body in `text`.
function cppFunctions(text) {
  const s = stripCpp(text);
  const out = [], stack = [];
  let line = 1, headStart = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\n') line += 1;
    else if (c === '{') {
      const head = s.slice(headStart, i).replace(/\s+/g, ' ');
      let kind = 'other';
      if (stack.some((b) => b.kind === 'fn')) kind = 'block';
      else if (/\b(namespace|extern)\b/.test(head) && !head.includes(')')) kind = 'namespace';
      else if (/\b(struct|class|union|enum)\b[^()]*$/.test(head)) kind = 'class';
      else if (head.includes(')') && !/=\s*$/.test(head)) kind = 'fn';
      const name = /([~\w:]+)\s*\(/.exec(head)?.[1] ?? head.slice(-40);
      stack.push({ kind, line, name });
      headStart = i + 1;
    } else if (c === '}') {
      const b = stack.pop();
      if (b?.kind === 'fn') out.push({ name: b.name, line: b.line, lines: line - b.line + 1 });
      headStart = i + 1;
    } else if (c === ';') headStart = i + 1;
  }
  return out;
}

const tooLong = (files, read) => files.flatMap((f) => read(readFileSync(join(ROOT, f), 'utf8'), f)
  .filter((fn) => fn.lines > LIMIT).map((fn) => `${f}:${fn.line} ${fn.name} (${fn.lines} lines)`));

test('no function over 100 lines in js/ or web/', () => {
  const files = [...filesUnder('js', /\.js$/), ...filesUnder('web', /\.js$/)];
  assert.ok(files.length > 50, `found only ${files.length} JS files`);
  assert.deepEqual(tooLong(files, jsFunctions), []);
});

test('no function over 100 lines in cpp/', () => {
  const files = filesUnder('cpp', /\.(cpp|hpp|inc)$/);
  assert.ok(files.length > 50, `found only ${files.length} C++ files`);
  assert.deepEqual(tooLong(files, cppFunctions), []);
});

test('the function-length check finds a long function in either language, and only it', () => {
  // Function bodies of n lines in all, braces included.
  const body = (n) => Array.from({ length: n - 2 }, (_, i) => `  x += ${i};`).join('\n');
  const js = `function f() {\n${body(101)}\n}\nconst g = () => {\n${body(100)}\n};\n` +
    `class C { m() {\n${body(102)}\n} }\n`;
  assert.deepEqual(jsFunctions(js).filter((fn) => fn.lines > LIMIT).map((fn) => [fn.name, fn.lines]),
    [['f', 101], ['m', 102]]);
  const cpp = `// "{" in a comment\nconst char* s = "}{";\n#define X {\nnamespace a {\nint f(int x) {\n${body(101)}\n}\n` +
    `struct S {\n  int g() {\n${body(100)}\n}\n};\nint h() { if (x) { return R"(})"[0]; } }\n}\n`;
  assert.deepEqual(cppFunctions(cpp).map((fn) => [fn.name, fn.lines]), [['f', 101], ['g', 100], ['h', 1]]);
});
