// The user's documentation holds together: the README stays a guide of at most ~450 lines that
// links every file of docs/, every relative link of the README and of docs/ leads to a file
// that exists (and to a heading of it, for a #fragment), and the repository speaks of the
// product, not of how it was developed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (rel) => readFileSync(join(root, rel), 'utf8');
const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');

/** The anchors of a markdown file's headings (outside code blocks). */
function anchors(text) {
  const out = new Set();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const h = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (h) out.add(slug(h[1]));
  }
  return out;
}

/** The relative links of a markdown file, outside code: [{ target, fragment }]. */
function links(text) {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((l) => !/^[a-z]+:/.test(l))
    .map((l) => {
      const [target, fragment] = l.split('#');
      return { link: l, target, fragment };
    });
}

test('README.md is a guide of at most ~450 lines', () => {
  const lines = read('README.md').split('\n').length;
  assert.ok(lines <= 460, `README.md has ${lines} lines: move reference material to docs/`);
});

test('README.md links every file of docs/', () => {
  const targets = new Set(links(read('README.md')).map((l) => l.target));
  assert.ok(docs.length >= 5, `docs/ holds ${docs}`);
  for (const d of docs) assert.ok(targets.has(d), `README.md does not link ${d}`);
});

test('every relative link of the README and of docs/ leads to a file and heading that exist', () => {
  for (const file of ['README.md', ...docs, 'tests/bench/README.md']) {
    for (const { link, target, fragment } of links(read(file))) {
      const path = target ? join(dirname(join(root, file)), target) : join(root, file);
      assert.ok(existsSync(path), `${file}: link ${link} leads to ${relative(root, path)}, which does not exist`);
      if (fragment) assert.ok(anchors(readFileSync(path, 'utf8')).has(fragment), `${file}: link ${link}: ${relative(root, path)} has no heading '#${fragment}'`);
    }
  }
});

test('the repository speaks of the product, not of its development', () => {
  // Written in pieces, so that this file does not match it.
  const ordinals = 'first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth';
  const pattern = [
    `(${ordinals}) ${'sess'}ion`,
    `\\(${'iss'}ues? [0-9]`,
    `\\b${'iss'}ues? [0-9]+( and [0-9]+)?[):,';]`,
    `\\b${'iss'}ue [0-9]+ (wants|asks|says)`,
    `${'seed'} example`,
    `${'wip'}-[a-z]`,
  ].join('|');
  const r = spawnSync('git', ['grep', '-niE', pattern], { cwd: root, encoding: 'utf8' });
  if (r.error || r.status === 128) return; // not a git checkout
  assert.equal(r.stdout, '', `development history in the repository:\n${r.stdout}`);
});
