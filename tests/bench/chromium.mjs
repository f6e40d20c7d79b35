// The benchmark in headless Chromium (Debian's /usr/bin/chromium via playwright-core): a
// cross-origin-isolated page (COOP/COEP, so SharedArrayBuffer and threads work) runs each
// measurement in a fresh Web Worker (pages/bench-worker.mjs) on the artifacts webtrain
// generated in Node (build/bench-models/KEY/, from worker.mjs prepare). Used by run.mjs
// (--env chromium) and tests/browser/bench-smoke.test.mjs.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { serve, launch, guard } from '../browser/harness.mjs';
import { ROOT, MODELS_DIR } from './models.mjs';

const MEASURE_TIMEOUT_MS = 15 * 60_000; // the d=256 transformer at 1 thread with ORT: ~1-2 min on a loaded machine
const ART_FILES = { trainingModel: 'training_model.onnx', evalModel: 'eval_model.onnx', optimizerModel: 'optimizer_model.onnx', checkpoint: 'checkpoint' };

/**
 * Starts the server and Chromium. `js`: the folder holding webtrain's js/, dist/ and web/ (the
 * repository, or run.mjs's snapshot of them); `liftoff: false` passes V8's --no-liftoff as
 * run.mjs does for Node. -> { measure(job), info(), close() }.
 */
export async function startChromium({ js = ROOT, liftoff = false } = {}) {
  const wtDir = relative(ROOT, js) || '.';
  const server = await serve({
    isolated: true,
    mounts: {
      '/js/': `${wtDir}/js/`,
      '/dist/': `${wtDir}/dist/`,
      '/web/': `${wtDir}/web/`,
      '/bench/': 'tests/bench/',
      '/models/': relative(ROOT, MODELS_DIR),
      '/ort/': 'node_modules/onnxruntime-web/dist/',
    },
  });
  let browser;
  try {
    browser = await launch(liftoff ? [] : ['--js-flags=--no-liftoff']);
  } catch (err) {
    await server.close();
    throw err;
  }
  const version = browser.version();

  /**
   * One measurement in a fresh context, page and worker: job = { runtime: 'webtrain' | 'ort' |
   * 'ort-patched', spec (models.mjs), threads, steps, warmup, evals, warmupMs }. -> the record
   * (modelResult) or { error }.
   */
  async function measure(job) {
    const dir = `/models/${job.spec.key}/`;
    const io = JSON.parse(readFileSync(`${MODELS_DIR}${job.spec.key}/io.json`, 'utf8'));
    const files = Object.fromEntries(Object.entries(ART_FILES).map(([k, f]) => [k, `${server.url}${dir}${f}`]));
    if (job.runtime === 'ort-patched') files.optimizerModel = `${server.url}${dir}optimizer_model.flag_noshape.onnx`;
    const ctx = await guard(await browser.newContext(), server.url);
    const log = [];
    try {
      const page = await ctx.newPage();
      page.on('console', (m) => log.push(`[${m.type()}] ${m.text()}`));
      page.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
      await page.goto(`${server.url}/bench/pages/index.html`);
      await page.waitForFunction(() => window.ready === true, null, { timeout: 15_000 });
      const o = { steps: job.steps, warmup: job.warmup, evals: job.evals, warmupMs: job.warmupMs };
      // A worker that never answers (a thread pool that does not start) is an error row, not a hung run.
      let timer;
      const timeout = new Promise((resolve) => {
        timer = setTimeout(() => resolve({ error: `no answer from the page's worker within ${MEASURE_TIMEOUT_MS / 1000} s` }), MEASURE_TIMEOUT_MS);
      });
      const r = await Promise.race([page.evaluate((j) => window.measure(j), { spec: job.spec, runtime: job.runtime, threads: job.threads, io, o, files }), timeout]);
      clearTimeout(timer);
      if (ctx.offsite.length) r.error = `requests left 127.0.0.1: ${ctx.offsite.join(', ')}`;
      if (r.error && log.length) r.error += ` | console: ${log.slice(-3).join(' | ')}`;
      return { ...r, browser: version };
    } catch (err) {
      return { error: `chromium: ${String(err?.message ?? err).split('\n')[0]}${log.length ? ` | console: ${log.slice(-3).join(' | ')}` : ''}` };
    } finally {
      await ctx.close();
    }
  }

  return {
    version,
    measure,
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}
