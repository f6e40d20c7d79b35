// The README's Node quick start, copied into an empty project that installed the packed tarball
// (offline), runs as written: `node train.mjs` next to the files its code reads, taken under
// the same names from the repository folder the README names (demo/models/digits/), trains five
// epochs with a falling loss, saves the checkpoint, exports the inference model and classifies
// an image with it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { installPacked, root, run, ok } from '../packed.mjs';
import { readmeSnippet, quickstartFiles } from '../readme.mjs';

let dir;
let project;

before(async () => {
  const files = quickstartFiles(await readFile(join(root, 'README.md'), 'utf8'), 'Quick start: Node', root);
  ({ dir, project } = await installPacked('webtrain-quickstart-node-'));
  for (const { name, from } of files) await copyFile(join(root, from), join(project, name));
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the quick starts read files that ship in the folder the README names, under the names it gives', async () => {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  for (const section of ['Quick start: Node', 'Quick start: browser']) {
    const files = quickstartFiles(readme, section, root);
    assert.deepEqual(files.map((f) => f.name).sort(), ['model.onnx', 'personal_train_x.bin', 'personal_train_y.bin'], section);
  }
  // A quick start that reads a file the folder does not have is refused (the test above would
  // then fail before running anything).
  const renamed = readme.replace("readFile('personal_train_x.bin')", "readFile('train_x.bin')");
  assert.notEqual(renamed, readme);
  assert.throws(() => quickstartFiles(renamed, 'Quick start: Node', root), /reads 'train_x\.bin', which is not in demo\/models\/digits\//);
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
