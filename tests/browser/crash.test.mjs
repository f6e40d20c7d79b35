// A save is one IndexedDB transaction: killing the page in the middle of saving a large
// checkpoint leaves the previous checkpoint loadable (or the new one, complete — never a mix or
// nothing). Three ways to die, in a persistent Chromium profile so the data outlives the page:
// the tab is closed, the renderer crashes (CDP Page.crash), the whole browser is SIGKILLed
// (then relaunched on the same profile). The kill is sent when the page has issued the
// IndexedDB put of the new version (seen through a console line from an instrumented
// IDBObjectStore.prototype.put), before the transaction can commit.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, launchPersistent, guard, openPage, screenshot, watch } from './harness.mjs';

const server = await serve();
const dirs = [];
after(async () => {
  await server.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const PAGE = () => `${server.url}/tests/browser/pages/index.html`;
const BIG = 48 * 1024 * 1024; // bytes of padding in the new version's checkpoint

/** Saves version 1, then builds version 2 (one more step + a big property); returns digests. */
async function prepare(page) {
  return page.evaluate(async (big) => {
    const { webtrain: wt, t } = window;
    const digest = (state) => {
      let h = 0x811c9dc5;
      for (const [, p] of [...state.parameters].sort((a, b) => (a[0] < b[0] ? -1 : 1))) for (const u of new Uint32Array(p.data.buffer)) h = Math.imul(h ^ u, 16777619) >>> 0;
      return h;
    };
    const g = await t.golden();
    const art = await wt.artifacts.generateArtifacts(g.model, g.options);
    const s = await t.session(art);
    t.trainSteps(s, g.steps.slice(0, 1));
    s.state.properties.set('version', 1);
    await wt.CheckpointState.saveCheckpoint(s.state, 'idb://ckpt', { includeOptimizerState: true });
    const v1 = digest(s.state);
    t.trainSteps(s, g.steps.slice(1, 2));
    s.state.properties.set('version', 2);
    s.state.properties.set('padding', 'x'.repeat(big));
    window.s = s;
    const orig = IDBObjectStore.prototype.put;
    IDBObjectStore.prototype.put = function (...args) {
      const r = orig.apply(this, args);
      console.log(`PUT ${this.name}`);
      return r;
    };
    t.status('saving version 2 (large)…');
    return { v1, v2: digest(s.state) };
  }, BIG);
}

/** Starts the save of version 2 without waiting; resolves when the put has been issued. */
async function startSave(page) {
  const put = page.waitForEvent('console', { predicate: (m) => m.text() === 'PUT blobs', timeout: 20_000 });
  const saved = { done: false };
  page.on('console', (m) => {
    if (m.text() === 'SAVED') saved.done = true;
  });
  page
    .evaluate(async () => {
      await window.webtrain.CheckpointState.saveCheckpoint(window.s.state, 'idb://ckpt', { includeOptimizerState: true });
      console.log('SAVED');
    })
    .catch(() => {}); // the page dies
  await put;
  return saved;
}

/** Loads idb://ckpt in a fresh page: { digest, version, size } */
async function inspect(page) {
  return page.evaluate(async () => {
    const { webtrain: wt, t } = window;
    const state = await wt.CheckpointState.loadCheckpoint('idb://ckpt');
    let h = 0x811c9dc5;
    for (const [, p] of [...state.parameters].sort((a, b) => (a[0] < b[0] ? -1 : 1))) for (const u of new Uint32Array(p.data.buffer)) h = Math.imul(h ^ u, 16777619) >>> 0;
    const version = state.properties.get('version');
    const entry = (await wt.idb.list()).find((e) => e.name === 'ckpt');
    t.log(`after the kill: idb://ckpt loads: version ${version}, ${entry.size} bytes, ${state.parameters.size} parameters`);
    t.status(`previous checkpoint intact (version ${version})`);
    return { digest: h, version, size: entry.size };
  });
}

function check(found, digests, saved, what) {
  assert.ok([1, 2].includes(found.version), `${what}: version ${found.version}`);
  const want = found.version === 1 ? digests.v1 : digests.v2;
  assert.equal(found.digest, want, `${what}: the loaded parameters are not those of version ${found.version}`);
  if (found.version === 1) assert.ok(found.size < BIG, `${what}: version 1 with the size of version 2`);
  else assert.ok(found.size > BIG, `${what}: version 2 truncated`);
  // Reported for the log: which version survived, and whether the save had finished.
  console.log(`# ${what}: found version ${found.version} (${found.size} bytes); save had ${saved.done ? '' : 'not '}finished when killed`);
}

async function profile() {
  const d = await mkdtemp(join(tmpdir(), 'webtrain-crash-'));
  dirs.push(d);
  return d;
}

test('closing the tab mid-save leaves the previous checkpoint loadable', async () => {
  const ctx = await guard(await launchPersistent(await profile()), server.url);
  try {
    const page = await openPage(ctx, PAGE());
    const digests = await prepare(page);
    const saved = await startSave(page);
    await page.close({ runBeforeUnload: false });
    const again = await openPage(ctx, PAGE());
    const found = await inspect(again);
    check(found, digests, saved, 'tab closed');
    await screenshot(again, 'crash-tab-closed');
  } finally {
    await ctx.close();
  }
});

test('a renderer crash mid-save leaves the previous checkpoint loadable', async () => {
  const ctx = await guard(await launchPersistent(await profile()), server.url);
  try {
    const page = await openPage(ctx, PAGE());
    const digests = await prepare(page);
    const cdp = await ctx.newCDPSession(page);
    const crashed = page.waitForEvent('crash', { timeout: 10_000 });
    const saved = await startSave(page);
    cdp.send('Page.crash').catch(() => {});
    await crashed;
    const again = await openPage(ctx, PAGE());
    const found = await inspect(again);
    check(found, digests, saved, 'renderer crashed');
    await screenshot(again, 'crash-renderer');
  } finally {
    await ctx.close();
  }
});

/** The pid of the browser process using `dir` as its profile (the one this test started). */
async function browserPid(dir) {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
      if (args.includes(`--user-data-dir=${dir}`) && !args.some((a) => a.startsWith('--type='))) return Number(pid);
    } catch {
      /* gone */
    }
  }
  return null;
}

test('killing the browser (SIGKILL) mid-save leaves the previous checkpoint loadable', async () => {
  const dir = await profile();
  let ctx = await guard(await launchPersistent(dir), server.url);
  let digests;
  let saved;
  try {
    const pid = await browserPid(dir);
    assert.ok(pid, 'cannot find the browser process');
    const page = await openPage(ctx, PAGE());
    digests = await prepare(page);
    saved = await startSave(page);
    process.kill(pid, 'SIGKILL');
  } finally {
    await ctx.close().catch(() => {});
  }
  ctx = await guard(await launchPersistent(dir), server.url);
  try {
    const again = await openPage(ctx, PAGE());
    const found = await inspect(again);
    check(found, digests, saved, 'browser killed');
    await screenshot(again, 'crash-browser-killed');
  } finally {
    await ctx.close();
  }
});
