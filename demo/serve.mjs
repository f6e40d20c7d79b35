#!/usr/bin/env node
// Serves the demo page locally: `node demo/serve.mjs [--port N] [--host H]` (or `npm run demo`).
//
// A tiny static server for this repository: only /demo/, /web/, /js/ and /dist/ are served
// (never the rest of the checkout), with correct MIME types (application/wasm for the core,
// text/javascript for modules). Binds 127.0.0.1; without --port it takes 8080, or a free port
// when 8080 is taken. Prints the URL and serves until Ctrl-C. No dependencies.
// Every answer carries COOP/COEP (Cross-Origin-Opener-Policy: same-origin,
// Cross-Origin-Embedder-Policy: require-corp): the page is crossOriginIsolated, so webtrain
// loads its threaded build (dist/mt/) and trains on several cores.
//
// Also usable from code: `const { url, close } = await startServer({ port: 0 })`.
import { createServer } from 'node:http';
import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const root = fileURLToPath(new URL('../', import.meta.url));

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.bin': 'application/octet-stream',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
};
const PUBLIC = ['demo/', 'web/', 'js/', 'dist/'];
/** Cross-origin isolation: SharedArrayBuffer, hence webtrain's threaded build, in the page and its workers. */
const ISOLATION = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };

/** Starts the server; resolves { url, port, server, close }. port 0 = a free port. */
export function startServer({ port = 0, host = '127.0.0.1', log = null } = {}) {
  const server = createServer(async (req, res) => {
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain', ...ISOLATION }).end('bad request');
      return;
    }
    log?.(`${req.method} ${path}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD', ...ISOLATION }).end('method not allowed');
      return;
    }
    if (path === '/' || path === '/demo') {
      res.writeHead(302, { location: '/demo/', ...ISOLATION }).end();
      return;
    }
    let rel = normalize(path).split(sep).join('/').replace(/^\/+/, '');
    if (rel.endsWith('/')) rel += 'index.html';
    if (rel.split('/').includes('..') || !PUBLIC.some((p) => rel.startsWith(p))) {
      res.writeHead(404, { 'content-type': 'text/plain', ...ISOLATION }).end('not found');
      return;
    }
    const file = join(root, rel);
    try {
      const s = await stat(file);
      if (!s.isFile()) throw new Error('not a file');
      res.writeHead(200, {
        'content-type': MIME[extname(file)] ?? 'application/octet-stream',
        'content-length': s.size,
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
        ...ISOLATION,
      });
      if (req.method === 'HEAD') res.end();
      else createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain', ...ISOLATION }).end('not found');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const p = server.address().port;
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        server,
        port: p,
        url: `http://${shown}:${p}/demo/`,
        close: () => new Promise((r) => {
          server.closeAllConnections?.();
          server.close(() => r());
        }),
      });
    });
  });
}

function parseArgs(argv) {
  const out = { port: null, host: '127.0.0.1', verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const [, v] = a.split('=');
      if (v !== undefined) return v;
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--port' || a.startsWith('--port=') || a === '-p') {
      const v = Number(value());
      if (!Number.isInteger(v) || v < 0 || v > 65535) throw new Error(`--port: expected 0..65535, got '${a}'`);
      out.port = v;
    } else if (a === '--host' || a.startsWith('--host=')) out.host = value();
    else if (a === '--verbose' || a === '-v') out.verbose = true;
    else if (a === '--help' || a === '-h') {
      console.log('usage: node demo/serve.mjs [--port N] [--host 127.0.0.1] [--verbose]\nServes the webtrain demo page and prints its URL.');
      process.exit(0);
    } else throw new Error(`unknown argument '${a}' (try --help)`);
  }
  return out;
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`serve: ${e.message}`);
    process.exit(2);
  }
  if (!existsSync(join(root, 'dist/webtrain-core.wasm')) || !existsSync(join(root, 'dist/webtrain-core.mjs'))) {
    console.error('serve: dist/webtrain-core.{mjs,wasm} are missing: build the core first (npm run build)');
    process.exit(1);
  }
  const log = opts.verbose ? (line) => console.log(line) : null;
  let srv;
  try {
    srv = await startServer({ port: opts.port ?? 8080, host: opts.host, log });
  } catch (e) {
    if (e.code === 'EADDRINUSE' && opts.port === null) srv = await startServer({ port: 0, host: opts.host, log });
    else {
      console.error(`serve: cannot listen on ${opts.host}:${opts.port ?? 8080}: ${e.code ?? e.message}`);
      process.exit(1);
    }
  }
  console.log(`webtrain demo: ${srv.url}`);
  console.log('(serving demo/, web/, js/ and dist/ from this checkout; Ctrl-C stops)');
  const stop = () => srv.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
