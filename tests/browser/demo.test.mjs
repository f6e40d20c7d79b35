// The demo page (demo/), end to end in headless Chromium, served by the demo's own one-command
// server (node demo/serve.mjs): load (artifacts generated in the worker) -> draw a digit with
// the mouse and add it -> add the bundled "my handwriting" set -> fine-tune in the worker
// (accuracy on the held-out personal digits must improve) -> save to IndexedDB -> reload ->
// resume (same accuracy as saved) -> export the ONNX model as a download, which onnx-loads in
// Node (webtrain's InferenceSession) and scores what the page said. No request may leave
// 127.0.0.1, and none at all may happen after the page has loaded. Screenshots:
// build/browser-screenshots/demo-*.png; with WEBTRAIN_UPDATE_SCREENSHOT=1 the after-fine-tuning
// one is copied to demo/screenshot.png (the README's).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { launch, guard, watch, screenshot, root } from './harness.mjs';
import { InferenceSession, Tensor } from '../../js/index.js';
import { slant, blockCounts, encodeSample, decodeSample } from '../../demo/digits.js';

let server;
let browser;
const served = []; // request paths, as the server logged them

before(async () => {
  const child = spawn(process.execPath, [join(root, 'demo/serve.mjs'), '--port', '0', '--verbose'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`demo/serve.mjs printed no URL in 10 s: ${out} ${err}`)), 10_000);
    child.stdout.on('data', (d) => {
      out += d;
      const lines = out.split('\n');
      out = lines.pop();
      for (const line of lines) {
        const m = /^webtrain demo: (http:\/\/127\.0\.0\.1:\d+\/demo\/)$/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        } else if (/^(GET|HEAD|POST|PUT) /.test(line)) served.push(line);
      }
    });
    child.on('exit', (code) => reject(new Error(`demo/serve.mjs exited (${code}): ${err}`)));
  });
  server = { child, url, origin: new URL(url).origin };
  browser = await launch();
});

after(async () => {
  await browser?.close();
  server?.child.kill('SIGTERM');
});

const settle = () => new Promise((r) => setTimeout(r, 300));

/** Draws a "7" on the pad with mouse events. */
async function drawSeven(page) {
  const box = await page.locator('#pad').boundingBox();
  const at = (fx, fy) => [box.x + fx * box.width, box.y + fy * box.height];
  await page.mouse.move(...at(0.28, 0.22));
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(...at(0.28 + (0.44 * i) / 10, 0.22));
  for (let i = 1; i <= 14; i++) await page.mouse.move(...at(0.72 - (0.26 * i) / 14, 0.22 + (0.58 * i) / 14));
  await page.mouse.up();
}

async function readyPage(page) {
  await page.waitForFunction(() => ['ready', 'trained', 'saved', 'error'].includes(document.body.dataset.state), null, { timeout: 30_000 });
  const err = await page.evaluate(() => (document.getElementById('error').hidden ? null : document.getElementById('error').textContent));
  assert.equal(err, null, `the page shows an error: ${err}\n${page.log.join('\n')}`);
  assert.notEqual(await page.evaluate(() => document.body.dataset.state), 'error');
}

test('demo preprocessing: block counts, the slant of make_digits_model.py, sample encoding', () => {
  // A full 32x32 bitmap is 16 ink pixels in every 4x4 block; one pixel is 1/16 of its block.
  assert.deepEqual(Array.from(blockCounts(new Uint8Array(1024).fill(1))), new Array(64).fill(1));
  const one = new Uint8Array(1024);
  one[5 * 32 + 9] = 1; // row 5, column 9 -> block (1, 2)
  const f = blockCounts(one);
  assert.equal(f[1 * 8 + 2], 1 / 16);
  assert.equal(f.reduce((a, b) => a + b, 0), 1 / 16);
  // slant(): a vertical line in column 3; row 0 moves right by 0.35 * 3.5 = 1.225 px (bilinear),
  // the middle rows by +-0.175, row 7 left by 1.225 — as scripts/make_digits_model.py does.
  const img = new Float32Array(64);
  for (let r = 0; r < 8; r++) img[r * 8 + 3] = 1;
  const s = slant(img, 0.35);
  const near = (a, b) => Math.abs(a - b) < 1e-6;
  assert.ok(near(s[0 * 8 + 4], 0.775) && near(s[0 * 8 + 5], 0.225) && near(s[0 * 8 + 3], 0), `row 0: ${s.slice(0, 8)}`);
  assert.ok(near(s[7 * 8 + 2], 0.775) && near(s[7 * 8 + 1], 0.225), `row 7: ${s.slice(56)}`);
  assert.ok(near(s[3 * 8 + 3], 0.825) && near(s[3 * 8 + 4], 0.175), `row 3: ${s.slice(24, 32)}`);
  const x = Float32Array.from({ length: 64 }, (_, i) => (i * 0.37) % 1);
  assert.deepEqual(decodeSample(encodeSample(x)), x);
});

test('demo: draw, fine-tune, save, reload and resume, export', async () => {
  const t0 = Date.now();
  const ctx = await guard(await browser.newContext({ viewport: { width: 1200, height: 900 }, acceptDownloads: true }), server.origin);
  const seen = [];
  ctx.on('request', (r) => seen.push(r.url()));
  try {
    const page = watch(await ctx.newPage());
    await page.goto(server.url);
    await readyPage(page);
    await settle();
    // demo/serve.mjs sends COOP/COEP: the page is cross-origin isolated, its worker loads the
    // threaded build, and the page says how many threads it uses.
    const runtime = await page.evaluate(() => ({ isolated: globalThis.crossOriginIsolated, ...window.demo.runtime }));
    assert.equal(runtime.isolated, true, 'demo/serve.mjs does not make the page cross-origin isolated');
    assert.equal(runtime.build, 'threaded');
    assert.equal(runtime.crossOriginIsolated, true);
    assert.match(await page.textContent('#fact-core'), new RegExp(`· ${runtime.threads} threads?$`));
    const servedAtLoad = served.length;
    const seenAtLoad = seen.length;
    const before = Number(await page.locator('#acc-before').getAttribute('data-value'));
    assert.ok(before > 0.5 && before < 0.8, `pretrained accuracy ${before}`);
    assert.equal(await page.locator('#btn-train').isDisabled(), true, 'Fine-tune is enabled with no samples');
    assert.equal(await page.locator('#resume').isHidden(), true, 'Resume offered with nothing saved');

    // (a) draw a digit, label it, add it.
    await drawSeven(page);
    // The pretrained model reads the clean drawing right (the preprocessing matches sklearn's).
    await page.waitForFunction(() => document.getElementById('reads').dataset.digit !== undefined);
    assert.equal(await page.textContent('#reads'), '7', 'the pretrained model misreads a clean 7: preprocessing off?');
    assert.equal(await page.locator('#btn-add').isDisabled(), true, 'Add is enabled without a label');
    await page.click('#picker button[data-digit="7"]');
    await page.click('#btn-add');
    const sample = await page.evaluate(() => ({ n: window.demo.drawn.length, y: window.demo.drawn[0]?.y, x: Array.from(window.demo.drawn[0]?.x ?? []) }));
    assert.equal(sample.n, 1);
    assert.equal(sample.y, 7);
    assert.equal(sample.x.length, 64);
    assert.ok(sample.x.every((v) => v >= 0 && v <= 1 && Number.isInteger(v * 16)), 'features are not block counts / 16');
    const ink = sample.x.reduce((a, b) => a + b, 0);
    assert.ok(ink > 3 && ink < 40, `implausible amount of ink: ${ink}`);
    // A 7: ink in the top row, the bottom-left half of the top rows emptier than the top right.
    assert.ok(sample.x.slice(0, 8).reduce((a, b) => a + b, 0) > 1.5, `no top bar: ${sample.x.slice(0, 8)}`);
    assert.equal(await page.locator('#thumbs .thumb.drawn').count(), 1);

    // (b) the bundled set.
    await page.click('#btn-bundle');
    assert.equal((await page.textContent('#samples-badge')).trim(), '251 samples');
    await screenshot(page, 'demo-samples');

    // Fine-tune in the worker; the main thread keeps running a timer meanwhile.
    await page.evaluate(() => {
      window.ticks = 0;
      window.tickTimer = setInterval(() => window.ticks++, 20);
    });
    await page.click('#btn-train');
    // The buttons are read in the same tick as the state (a fast run may be over by a later query).
    const during = await (await page.waitForFunction(() => document.body.dataset.state === 'training' && {
      save: document.getElementById('btn-save').disabled,
      bundle: document.getElementById('btn-bundle').disabled,
    })).jsonValue();
    assert.equal(during.save, true, 'Save is enabled while training');
    assert.equal(during.bundle, true);
    await page.waitForFunction(() => document.body.dataset.state === 'trained', null, { timeout: 30_000 });
    const trained = await page.evaluate(() => {
      clearInterval(window.tickTimer);
      const c = window.demo.chart;
      return {
        ticks: window.ticks,
        after: Number(document.getElementById('acc-after').dataset.value),
        hits: window.demo.result.hits,
        lossPoints: c.loss.length,
        accPoints: c.acc.length,
        firstLoss: c.loss[0][1],
        lastLoss: c.loss.at(-1)[1],
        bar: document.getElementById('bar').style.width,
        epochs: window.demo.epochsTrained,
      };
    });
    assert.ok(trained.after > before, `accuracy did not improve: ${before} -> ${trained.after}`);
    assert.ok(trained.after >= before + 0.1, `accuracy improved too little: ${before} -> ${trained.after}`);
    assert.equal(trained.epochs, 8);
    assert.equal(trained.lossPoints, 8 * Math.ceil(251 / 32), 'a loss point per step');
    assert.equal(trained.accPoints, 1 + 8, 'an accuracy point before training and after each epoch');
    assert.ok(trained.lastLoss < trained.firstLoss, `loss did not go down: ${trained.firstLoss} -> ${trained.lastLoss}`);
    assert.equal(parseFloat(trained.bar), 100);
    assert.ok(trained.ticks > 0, 'the main thread timer never fired during training');
    // What a new user sees after fine-tuning: a fresh 7 on the pad, written in the bundled
    // hand's slant, which the fine-tuned model reads.
    await drawSeven(page);
    await page.check('#slant');
    await page.waitForFunction(() => document.getElementById('reads').dataset.seq === String(window.demo.readings), null, { timeout: 5_000 });
    assert.equal(await page.textContent('#reads'), '7', 'the fine-tuned model misreads a slanted 7');
    await page.keyboard.press('7'); // the keyboard picks the label too
    assert.equal(await page.getAttribute('#picker button[data-digit="7"]', 'aria-pressed'), 'true');
    assert.equal(await page.locator('#btn-add').isDisabled(), false);
    await page.evaluate(() => document.activeElement?.blur());
    await settle(); // the progress bar's transition
    const shot = await screenshot(page, 'demo-finetuned');
    // The README's screenshot is refreshed on request only, so a test run leaves the tree clean.
    if (process.env.WEBTRAIN_UPDATE_SCREENSHOT === '1') await copyFile(shot, join(root, 'demo/screenshot.png'));

    // Save to IndexedDB.
    await page.click('#btn-save');
    await page.waitForFunction(() => document.body.dataset.state === 'saved', null, { timeout: 10_000 });
    assert.match(await page.textContent('#save-text'), /Saved to idb:\/\/webtrain-demo\/checkpoint/);
    await settle();
    assert.equal(served.length, servedAtLoad, `requests after the page loaded: ${served.slice(servedAtLoad).join(', ')}`);
    assert.equal(seen.length, seenAtLoad, `requests after the page loaded: ${seen.slice(seenAtLoad).join(', ')}`);

    // Reload: the page offers to resume; resuming gives the saved accuracy.
    await page.reload();
    await readyPage(page);
    await page.waitForFunction(() => document.body.dataset.resumable === 'true');
    assert.equal(await page.locator('#resume').isVisible(), true);
    assert.match(await page.textContent('#resume-text'), new RegExp(`${(100 * trained.after).toFixed(1)}%`));
    await settle();
    const servedAtReload = served.length;
    const seenAtReload = seen.length;
    await screenshot(page, 'demo-resume-offered');
    await page.click('#btn-resume');
    await page.waitForFunction(() => document.body.dataset.resumed === 'true' && document.body.dataset.state === 'saved', null, { timeout: 10_000 });
    const resumed = await page.evaluate(() => ({
      after: Number(document.getElementById('acc-after').dataset.value),
      hits: window.demo.result.hits,
      drawn: window.demo.drawn.map((d) => [d.y, Array.from(d.x)]),
      bundled: window.demo.bundled,
      accPoints: window.demo.chart.acc.length,
    }));
    assert.equal(resumed.after, trained.after, 'resumed accuracy differs from the saved one');
    assert.equal(resumed.hits, trained.hits);
    assert.deepEqual(resumed.drawn, [[7, sample.x]], 'the drawn sample was not restored');
    assert.equal(resumed.bundled, true);
    assert.equal(resumed.accPoints, 1 + 8, 'the chart was not restored');
    await settle();
    await screenshot(page, 'demo-resumed');

    // Export: a download, which is a plain ONNX model scoring what the page says.
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 10_000 }), page.click('#btn-export')]);
    assert.equal(download.suggestedFilename(), 'digits-finetuned.onnx');
    const bytes = new Uint8Array(await readFile(await download.path()));
    const dir = join(root, 'demo/models/digits');
    const tx = new Float32Array((await readFile(join(dir, 'personal_test_x.bin'))).buffer.slice(0));
    const ty = new Int32Array((await readFile(join(dir, 'personal_test_y.bin'))).buffer.slice(0));
    const session = await InferenceSession.create(bytes);
    const { output } = await session.run({ input: new Tensor('float32', tx, [ty.length, 64]) });
    session.release();
    let hits = 0;
    for (let r = 0; r < ty.length; r++) {
      const l = output.data.subarray(r * 10, r * 10 + 10);
      if (l.indexOf(Math.max(...l)) === ty[r]) hits++;
    }
    assert.equal(hits, trained.hits, 'the exported model scores differently from the page');
    await settle();
    assert.equal(served.length, servedAtReload, `requests after the reloaded page loaded: ${served.slice(servedAtReload).join(', ')}`);
    assert.equal(seen.length, seenAtReload, `requests after the reloaded page loaded: ${seen.slice(seenAtReload).join(', ')}`);

    // Nothing left 127.0.0.1; no page errors.
    assert.deepEqual(ctx.offsite, []);
    assert.deepEqual(seen.filter((u) => !u.startsWith(`${server.origin}/`) && !u.startsWith('blob:') && !u.startsWith('data:')), []);
    assert.deepEqual(page.log.filter((l) => l.startsWith('[pageerror]') || l.startsWith('[error]')), []);
    assert.ok(Date.now() - t0 < 60_000, `the demo test took ${Date.now() - t0} ms`);
  } finally {
    await ctx.close();
  }
});
