// The README's Node quick start, copied into an empty project that installed the packed tarball
// (offline), runs as written: `node train.mjs` next to the digits model and data it names
// (demo/models/digits/, renamed as the README says) trains five epochs with a falling loss,
// saves the checkpoint, exports the inference model and classifies an image with it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { installPacked, root, run, ok } from '../packed.mjs';
import { readmeSnippet, QUICKSTART_FILES } from '../readme.mjs';

let dir;
let project;

before(async () => {
  ({ dir, project } = await installPacked('webtrain-quickstart-node-'));
  for (const [name, from] of Object.entries(QUICKSTART_FILES)) await copyFile(join(root, from), join(project, name));
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the README names the quick start files', async () => {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  for (const [name, from] of Object.entries(QUICKSTART_FILES)) {
    assert.ok(readme.includes(name) && readme.includes(from.split('/').pop()), `README.md does not name ${name} (${from})`);
  }
});

test("the README's Node quick start runs as written in a project that installed the tarball", async () => {
  const code = readmeSnippet(await readFile(join(root, 'README.md'), 'utf8'), 'Quick start: Node');
  await writeFile(join(project, 'train.mjs'), code);
  const r = ok(run(process.execPath, ['train.mjs'], project, { timeout: 120_000 }), 'node train.mjs (the README quick start)');
  const losses = [...r.stdout.matchAll(/^epoch (\d): loss (\S+)$/gm)].map((m) => Number(m[2]));
  assert.equal(losses.length, 5, `expected five epoch lines:\n${r.output}`);
  for (const l of losses) assert.ok(Number.isFinite(l) && l > 0, `loss ${l}:\n${r.output}`);
  assert.ok(losses[4] < losses[0], `the loss did not fall: ${losses}`);
  const m = /^first image: predicted (\d), labelled (\d)$/m.exec(r.stdout);
  assert.ok(m, `no prediction line:\n${r.output}`);
  for (const f of ['checkpoint', 'model-trained.onnx']) assert.ok((await stat(join(project, f))).size > 1000, `${f} was not written`);
  // It ran the installed copy, not the work tree.
  assert.doesNotMatch(r.output, new RegExp(`${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}js/`));
});
