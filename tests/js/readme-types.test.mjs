// The README's JavaScript snippets type-check under TypeScript `strict` against the package:
// every ```js block of the quick starts and of "## Using it from JavaScript", and every one of
// docs/api.md, becomes a .ts file
// of a project where `webtrain` is this package (node_modules/webtrain -> the repository, so its
// package.json "exports" and "types" are what TypeScript resolves), checked with
// `--module node16 --moduleResolution node16` and with `--module esnext --moduleResolution
// bundler` (Vite's default). Names a snippet uses without defining them (the `x`, `labels`,
// `signal` a reader brings) are declared for it from ASSUMED; any other undefined name fails.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readmeSnippets } from '../readme.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(root, 'node_modules/.bin/tsc');

/** The sections whose ```js blocks are checked (a "## " heading and its "### " subsections). */
const SECTIONS = ['Quick start: Node', 'Quick start: browser', 'Using it from JavaScript'];

/** What the snippets may use without defining it: the reader's data and objects. */
const ASSUMED = {
  x: 'Float32Array',
  labels: 'Int32Array',
  xEval: "import('webtrain').Tensor",
  labelsEval: "import('webtrain').Tensor",
  signal: 'AbortSignal',
  module: "import('webtrain').Module",
  optimizer: "import('webtrain').Optimizer",
  scheduler: "import('webtrain').LinearLRScheduler",
  state: "import('webtrain').CheckpointState",
  y: "import('webtrain').Tensor",
  xTrain: "import('webtrain').Tensor",
  yTrain: "import('webtrain').Tensor",
  xVal: "import('webtrain').Tensor",
  yVal: "import('webtrain').Tensor",
  onBatchEnd: "(batch: import('webtrain').FitBatch) => void",
  onEpochEnd: "(epoch: import('webtrain').FitEpoch) => boolean",
};

let dir;
let files; // [{ name, doc, section, node }]

function runTsc(config) {
  const r = spawnSync(tsc, ['-p', config], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  if (r.error) throw r.error;
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

async function writeConfig(name, resolution, group) {
  const config = {
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'ES2022',
      module: resolution === 'node16' ? 'node16' : 'esnext',
      moduleResolution: resolution,
      lib: ['ES2022', 'DOM', 'DOM.Iterable'],
      // Node's globals only where a snippet is a Node script (it imports node: modules).
      types: group === 'node' ? ['node'] : [],
      skipLibCheck: false,
    },
    files: files.filter((f) => f.node === (group === 'node') && (resolution === 'bundler' || f.section !== 'Quick start: browser')).map((f) => f.name),
  };
  await writeFile(join(dir, name), JSON.stringify(config, null, 2));
  return name;
}

before(async () => {
  assert.ok(existsSync(tsc), `${tsc} is missing: run npm install (typescript is a dev dependency)`);
  const snippets = [
    ...readmeSnippets(await readFile(join(root, 'README.md'), 'utf8'), SECTIONS).map((s) => ({ ...s, doc: 'README.md' })),
    ...readmeSnippets(await readFile(join(root, 'docs/api.md'), 'utf8'), null).map((s) => ({ ...s, doc: 'docs/api.md' })),
  ];
  dir = await mkdtemp(join(tmpdir(), 'webtrain-readme-types-'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'readme-snippets', private: true, type: 'module' }));
  await mkdir(join(dir, 'node_modules'));
  await symlink(root.replace(/\/$/, ''), join(dir, 'node_modules/webtrain'), 'dir');
  await symlink(join(root, 'node_modules/@types'), join(dir, 'node_modules/@types'), 'dir');
  files = snippets.map((s, i) => ({ ...s, name: `snippet${i + 1}.ts`, node: /from 'node:/.test(s.code) }));
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the README has the snippets this test checks', () => {
  const sections = new Set(files.map((f) => f.section));
  for (const s of SECTIONS) assert.ok(sections.has(s), `no \`\`\`js block under "## ${s}" in README.md`);
  assert.ok(files.some((f) => f.doc === 'docs/api.md'), 'no ```js block in docs/api.md');
  assert.ok(files.length >= 4, `only ${files.length} snippets`);
});

const withPrelude = (f, names) => `${f.code}\nexport {};\n${[...names].map((n) => `declare const ${n}: ${ASSUMED[n]};`).join(' ')}\n`;

test("tsc --strict accepts the README's JavaScript snippets (node16 and bundler resolution)", async () => {
  // Pass 1: each snippet with a declaration of every ASSUMED name it mentions; the snippet
  // defines those whose declaration clashes (TS2451), and any name it neither defines nor may
  // assume is an error (TS2304 & co.).
  const assumed = new Map(files.map((f) => [f.name, new Set(Object.keys(ASSUMED).filter((n) => new RegExp(`\\b${n}\\b`).test(f.code)))]));
  const unknown = new Map(files.map((f) => [f.name, new Set()]));
  for (const f of files) await writeFile(join(dir, f.name), withPrelude(f, assumed.get(f.name)));
  for (const group of ['node', 'web']) {
    const { output } = runTsc(await writeConfig(`tsconfig.${group}.free.json`, 'bundler', group));
    for (const m of output.matchAll(/^(snippet\d+\.ts)\(\d+,\d+\): error TS(\d+): [^']*'(\w+)'/gm)) {
      const [, file, code, name] = m;
      if (code === '2451' || code === '2300') assumed.get(file).delete(name);
      else if (['2304', '2552', '2580', '2591', '18004'].includes(code)) unknown.get(file).add(name);
    }
  }
  for (const f of files) {
    assert.deepEqual([...unknown.get(f.name)], [], `${f.doc} snippet ${f.name} ("## ${f.section}") uses names it neither imports nor defines (the snippets may assume only ${Object.keys(ASSUMED).join(', ')}):\n${f.code}`);
    await writeFile(join(dir, f.name), withPrelude(f, assumed.get(f.name)));
  }
  // Pass 2: no error at all, under both resolutions (the browser quick start, which imports the
  // browser entry's worker() and idb, under bundler resolution only: Node's resolution gives
  // the Node entry, which has neither).
  for (const resolution of ['node16', 'bundler']) {
    for (const group of ['node', 'web']) {
      const { status, output } = runTsc(await writeConfig(`tsconfig.${resolution}.${group}.json`, resolution, group));
      const snippetOf = (line) => files.find((f) => line.startsWith(f.name));
      const errors = output.split('\n').filter((l) => / error TS/.test(l)).map((l) => `${l}\n    (${snippetOf(l)?.doc} "## ${snippetOf(l)?.section}")`);
      assert.equal(status, 0, `tsc --strict (${resolution}, ${group} snippets) rejects README/docs snippets:\n${errors.join('\n') || output}`);
    }
  }
});
