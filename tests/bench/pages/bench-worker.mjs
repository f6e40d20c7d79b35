// One benchmark measurement in a Web Worker of the benchmark page (tests/bench/pages/index.html,
// served by tests/bench/chromium.mjs): webtrain from the browser entry (/web/index.js: the
// threaded build when the page is crossOriginIsolated and job.threads > 1) or onnxruntime-web's
// training build (/ort/) at job.threads, on the artifacts webtrain generated in Node
// (/models/KEY/). Answers one message: the record measure.mjs's modelResult makes, or { error }.
import { watchMemories, measureWebtrain, measureOrt, configureOrt, modelResult } from '../measure.mjs';

const memories = watchMemories();

async function bytes(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

async function artifacts(files) {
  const entries = await Promise.all(Object.entries(files).map(async ([k, url]) => [k, await bytes(url)]));
  return Object.fromEntries(entries);
}

async function measure(job) {
  const { spec: s, runtime, threads, io, o } = job;
  const art = await artifacts(job.files);
  let r;
  if (runtime === 'webtrain') {
    const wt = await import('/web/index.js');
    const core = await wt.init({ threads });
    const info = wt.runtimeInfo();
    r = { ...(await measureWebtrain(wt, core, s, art, io.train[io.train.length - 1].dtype, o)), threadsReported: info.threads, build: info.build };
  } else if (runtime === 'ort' || runtime === 'ort-patched') {
    const ort = await import('/ort/ort.training.wasm.min.mjs');
    configureOrt(ort, threads, new URL('/ort/', self.location.href).href);
    r = { ...(await measureOrt(ort, s, art, io, o)), heapBytes: memories.heapBytes() };
  } else throw new Error(`runtime ${runtime}: the Chromium benchmark runs webtrain, ort and ort-patched`);
  const artifactsLabel = runtime === 'ort-patched' ? 'webtrain, optimizer output patched' : 'webtrain';
  return modelResult(s, runtime, artifactsLabel, r, { env: 'chromium', threads, crossOriginIsolated: self.crossOriginIsolated === true, hardwareConcurrency: navigator.hardwareConcurrency });
}

self.onmessage = async ({ data: job }) => {
  let out;
  try {
    out = await measure(job);
  } catch (err) {
    out = { error: String(err?.stack ?? err) };
  }
  self.postMessage(out);
};
