// Shared by the browser tests (tests/browser/*.test.mjs): a static HTTP server on 127.0.0.1
// serving the repository's public folders with correct MIME types, Debian's Chromium driven by
// playwright-core, a guard that fails the test on any request leaving 127.0.0.1, and
// screenshots into build/browser-screenshots/<name>.png.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, after } from 'node:test';
import { chromium } from 'playwright-core';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const screenshotDir = join(root, 'build/browser-screenshots');
export const chromiumPath = process.env.WEBTRAIN_CHROMIUM ?? '/usr/bin/chromium';
export const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.bin': 'application/octet-stream',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};
// Only these folders are served (never the whole checkout).
const PUBLIC = ['js/', 'dist/', 'web/', 'demo/', 'tests/browser/pages/', 'tests/golden/cases/', 'tests/data/external/'];

/** The headers that make a page cross-origin isolated (SharedArrayBuffer, hence threads). */
export const ISOLATION_HEADERS = Object.freeze({ 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' });

/**
 * Starts the server on a free port. `aliases` maps extra URL paths to repository files
 * (e.g. { '/elsewhere/core.wasm': 'dist/webtrain-core.wasm' }). With `dir`, serves all of that
 * folder instead of the repository's public ones. With `isolated`, every answer carries
 * COOP/COEP (ISOLATION_HEADERS): pages are crossOriginIsolated and get the threaded build.
 * `mounts` maps URL prefixes to folders (absolute, or relative to the repository), served
 * before the rest (e.g. { '/ort/': 'node_modules/onnxruntime-web/dist/' }: the benchmark's).
 * Returns { url, close, requests }.
 */
export async function serve({ aliases = {}, dir = null, isolated = false, mounts = {} } = {}) {
  const extra = isolated ? ISOLATION_HEADERS : {};
  const requests = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requests.push(path);
    const mount = path in aliases ? undefined : Object.keys(mounts).find((m) => path.startsWith(m));
    let rel = aliases[path] ?? normalize(mount ? path.slice(mount.length) : path).replace(/^\/+/, '');
    if (rel === '' || rel.endsWith('/')) rel += 'index.html';
    if (rel.includes('..') || (!dir && !mount && !PUBLIC.some((p) => rel.startsWith(p)))) {
      res.writeHead(404, { 'content-type': 'text/plain', ...extra }).end('not found');
      return;
    }
    const file = mount ? resolve(root, mounts[mount], rel) : join(dir ?? root, rel);
    try {
      const s = await stat(file);
      if (!s.isFile()) throw new Error('not a file');
      res.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream', 'content-length': s.size, 'cache-control': 'no-store', ...extra });
      createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain', ...extra }).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    requests,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}

/** Debian's Chromium, headless; `extraArgs` after the usual ones (e.g. '--js-flags=--no-liftoff'). */
export function launch(extraArgs = []) {
  return chromium.launch({ executablePath: chromiumPath, args: [...chromiumArgs, ...extraArgs], headless: true });
}

export function launchPersistent(userDataDir) {
  return chromium.launchPersistentContext(userDataDir, { executablePath: chromiumPath, args: chromiumArgs, headless: true });
}

/**
 * Wires a context: requests to anything but `origin` are aborted and recorded in
 * `context.offsite` (tests assert it stays empty); page errors and console errors are kept for
 * failure messages.
 */
export async function guard(context, origin) {
  context.offsite = [];
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(`${origin}/`) || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
    context.offsite.push(u);
    return route.abort();
  });
  return context;
}

export function watch(page) {
  const log = [];
  page.on('console', (m) => log.push(`[${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
  page.log = log;
  return page;
}

export async function screenshot(page, name) {
  await mkdir(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Opens the test page and waits until it has imported webtrain (window.ready). */
export async function openPage(context, url, page = null) {
  page = page ?? watch(await context.newPage());
  await page.goto(url);
  await page.waitForFunction(() => window.ready === true || window.loadError, null, { timeout: 15_000 });
  const err = await page.evaluate(() => window.loadError ?? null);
  if (err) throw new Error(`test page failed to load: ${err}\n${page.log.join('\n')}`);
  return page;
}

/**
 * For a test file: before its tests, start the server (serve(options)) and Chromium (with
 * launch's extraArgs); after them, stop both. Returns an object whose `server` and `browser`
 * are set once started.
 */
export function startBrowser(options, extraArgs = []) {
  const env = { server: null, browser: null };
  before(async () => {
    env.server = await serve(options);
    env.browser = await launch(extraArgs);
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.close();
  });
  return env;
}

/** fn(page, context) on the test page (tests/browser/pages/index.html) in a fresh guarded context, closed afterwards. */
export async function onTestPage({ server, browser }, fn) {
  const ctx = await guard(await browser.newContext(), server.url);
  try {
    return await fn(await openPage(ctx, `${server.url}/tests/browser/pages/index.html`), ctx);
  } finally {
    await ctx.close();
  }
}
