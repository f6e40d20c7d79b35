// The demo page: private fine-tuning of the bundled digit classifier, in a Web Worker.
//
//   1 Load      fetch model + data (everything, up front), start webtrain.worker(), generate
//               the training artifacts in the worker, measure the pretrained model; offer
//               "Resume" when a checkpoint saved by this page is in IndexedDB.
//   2 Samples   draw digits (demo/digits.js turns strokes into sklearn-style 8x8 inputs) and/or
//               add the bundled "my handwriting" set (the personal train split).
//   3 Fine-tune fit in the worker (w.fit), validating on the personal test split after each
//               epoch: progress bar, live loss/accuracy chart, before/after.
//   4 Save      the checkpoint (with optimizer state, and this page's session as a string
//               property: one IndexedDB transaction) to idb://webtrain-demo/checkpoint; export
//               the inference model as a download.
//
// Every call to the worker goes through `exclusive()`, one at a time, so a prediction for the
// drawing pad can never land between two training steps. After step 1 the page makes no
// network request: the worker, the core and the data are all loaded by then.
import { worker, Tensor, checkSupport } from '../web/index.js';
import { Chart } from './chart.js';
import { features, paintDigit, encodeSample, decodeSample, bounds } from './digits.js';

const MODEL_DIR = new URL('models/digits/', import.meta.url);
const CKPT = 'idb://webtrain-demo/checkpoint';
const SESSION_PROP = 'webtrain_demo';
const BATCH = 32;
const EXAMPLES = 16;

const $ = (id) => document.getElementById(id);
const pct = (a) => `${(100 * a).toFixed(1)}%`;
const fmtInt = (n) => n.toLocaleString('en-US');
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;

const app = {
  phase: 'loading', // loading | idle | training | saving | error
  meta: null,
  data: null, // { train: {x,y,n}, test: {x,y,n} }
  w: null,
  art: null,
  state: null,
  module: null,
  optimizer: null,
  scheduler: null,
  saved: null, // a CheckpointState loaded from IndexedDB, until resumed or discarded
  savedInfo: null,
  baseline: null, // { accuracy, hits, preds }
  result: null, // { accuracy, hits, preds, epochs }
  drawn: [], // [{ x: Float32Array, y }]
  bundled: false,
  epochsTrained: 0,
  savedAt: null,
  examples: [],
  abort: null,
  readings: 0, // drawing-pad readings requested (the test waits for the last one)
};
window.demo = app; // for the end-to-end test and the curious

// ---- worker calls, one at a time ------------------------------------------------------------
let queue = Promise.resolve();
function exclusive(fn) {
  const run = queue.then(fn, fn);
  queue = run.catch(() => {});
  return run;
}

// ---- errors ---------------------------------------------------------------------------------
function showError(err) {
  console.error(err);
  const box = $('error');
  box.textContent = `Something went wrong: ${err?.message ?? err}`;
  box.hidden = false;
}
window.addEventListener('unhandledrejection', (e) => showError(e.reason));
window.addEventListener('error', (e) => {
  if (/ResizeObserver/.test(e.message ?? '')) return; // benign layout notice, not an error
  showError(e.error ?? e.message);
});

// ---- rendering of states ----------------------------------------------------------------------
function sampleCount() {
  return app.drawn.length + (app.bundled ? app.data.train.n : 0);
}

function badge(id, text, kind = '') {
  const b = $(id);
  b.textContent = text;
  b.className = `badge ${kind}`;
}

function render() {
  const idle = app.phase === 'idle';
  const ready = app.module !== null;
  const n = app.data ? sampleCount() : 0;
  document.body.dataset.state = app.phase === 'idle' ? (app.savedAt && app.result ? 'saved' : app.result ? 'trained' : 'ready') : app.phase;
  $('btn-bundle').disabled = !idle || !ready || app.bundled;
  $('btn-bundle').textContent = app.bundled ? 'Added ✓' : `Add ${app.data?.train.n ?? 250} digits`;
  $('step-samples').querySelector('.bundle').classList.toggle('added', app.bundled);
  $('btn-clear-samples').disabled = !idle || n === 0;
  $('btn-add').disabled = !idle || !ready || !pad.hasInk() || pad.label === null;
  $('btn-train').disabled = !idle || !ready || n === 0;
  $('btn-train').textContent = app.result ? 'Fine-tune more' : 'Fine-tune';
  $('btn-stop').hidden = app.phase !== 'training';
  $('epochs').disabled = !idle;
  $('lr').disabled = !idle;
  $('btn-save').disabled = !idle || !app.result;
  $('btn-export').disabled = !idle || !app.result;
  $('btn-forget').hidden = !app.savedAt;
  $('btn-forget').disabled = !idle;
  $('btn-resume').disabled = !idle;
  $('btn-discard').disabled = !idle;
  badge('samples-badge', `${fmtInt(n)} sample${n === 1 ? '' : 's'}`, n ? 'ok' : '');
  $('step-samples').classList.toggle('done', n > 0);
  $('step-train').classList.toggle('done', Boolean(app.result) && app.phase !== 'training');
  $('step-save').classList.toggle('done', Boolean(app.savedAt));
  if (app.phase !== 'training') {
    if (app.result) badge('train-badge', `${pct(app.baseline.accuracy)} → ${pct(app.result.accuracy)}`, 'ok');
    else badge('train-badge', n ? 'ready to train' : 'waiting for samples');
  }
  badge('save-badge', app.savedAt ? 'saved in this browser' : 'nothing saved', app.savedAt ? 'ok' : '');
}

function checklist(item, status, detail) {
  const li = document.querySelector(`#load-list [data-item="${item}"]`);
  li.className = status;
  if (detail !== undefined) $(`load-${item}`).textContent = detail;
}

// ---- data -----------------------------------------------------------------------------------
async function fetchBytes(name) {
  const res = await fetch(new URL(name, MODEL_DIR));
  if (!res.ok) throw new Error(`cannot load ${name}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

async function loadData() {
  const res = await fetch(new URL('meta.json', MODEL_DIR));
  if (!res.ok) throw new Error(`cannot load meta.json: HTTP ${res.status}`);
  const meta = await res.json();
  const names = ['model', 'personal_train_x', 'personal_train_y', 'personal_test_x', 'personal_test_y'];
  const files = [meta.model.file, ...names.slice(1).map((k) => meta.files[k].file)];
  const [model, trx, try_, tex, tey] = await Promise.all(files.map(fetchBytes));
  const split = (x, y, key) => {
    const xs = new Float32Array(x.buffer, x.byteOffset, x.byteLength / 4);
    const ys = new Int32Array(y.buffer, y.byteOffset, y.byteLength / 4);
    if (xs.length !== ys.length * 64) throw new Error(`${key}: ${xs.length} values for ${ys.length} labels; expected 64 per digit`);
    return { x: xs, y: ys, n: ys.length };
  };
  const bytes = [model, trx, try_, tex, tey].reduce((a, b) => a + b.byteLength, 0);
  return { meta, model, bytes, train: split(trx, try_, 'personal_train'), test: split(tex, tey, 'personal_test') };
}

const row = (split, i) => split.x.subarray(i * 64, (i + 1) * 64);

// ---- model calls (in the worker) -----------------------------------------------------------------
function argmaxRows(logits) {
  const [n, k] = logits.dims;
  const out = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    let best = 0;
    for (let c = 1; c < k; c++) if (logits.data[r * k + c] > logits.data[r * k + best]) best = c;
    out[r] = best;
  }
  return out;
}

/** Accuracy of the current module on the personal test split (eval model: loss, logits). */
function evaluate() {
  return exclusive(async () => {
    const { test } = app.data;
    await app.module.eval();
    const [loss, logits] = await app.module.runAll(new Tensor('float32', test.x.slice(), [test.n, 64]), new Tensor('int32', test.y.slice(), [test.n]));
    const preds = argmaxRows(logits);
    let hits = 0;
    preds.forEach((p, i) => (hits += p === test.y[i] ? 1 : 0));
    return { accuracy: hits / test.n, hits, loss: loss.data[0], preds };
  });
}

/** The module's reading of one 8x8 input: { digit, confidence }. */
function predictOne(x) {
  return exclusive(async () => {
    await app.module.eval();
    const [, logits] = await app.module.runAll(new Tensor('float32', Float32Array.from(x), [1, 64]), new Tensor('int32', new Int32Array(1), [1]));
    const l = logits.data;
    const m = Math.max(...l);
    const e = Array.from(l, (v) => Math.exp(v - m));
    const s = e.reduce((a, b) => a + b, 0);
    const digit = argmaxRows(logits)[0];
    return { digit, confidence: e[digit] / s };
  });
}

// ---- 1 load -------------------------------------------------------------------------------------
async function load() {
  render();
  checklist('fetch', 'active');
  checkSupport();
  const t0 = performance.now();
  app.data = await loadData();
  app.meta = app.data.meta;
  checklist('fetch', 'done', `(${kib(app.data.bytes)}: model, ${app.data.train.n} + ${app.data.test.n} digits)`);

  checklist('core', 'active');
  app.w = await worker();
  const simd = await app.w.simdName();
  // Threads: the threaded build where the page is crossOriginIsolated (demo/serve.mjs sends
  // COOP/COEP), one thread otherwise.
  app.runtime = await app.w.runtimeInfo();
  const threads = `${app.runtime.threads} thread${app.runtime.threads === 1 ? '' : 's'}`;
  $('fact-core').textContent = `WebAssembly ${simd.replace(/^wasm-?/, '').toUpperCase() || 'SIMD'} · ${threads}`;
  $('fact-core').title = app.runtime.build === 'threaded'
    ? `threaded build (cross-origin isolated): ${threads}`
    : 'single-threaded build (this page is not cross-origin isolated: serve it with COOP/COEP for threads)';
  checklist('core', 'done', `(${simd}, ${threads}, ${app.runtime.build} build)`);

  checklist('artifacts', 'active');
  const t1 = performance.now();
  app.art = await exclusive(() =>
    app.w.artifacts.generateArtifacts(app.data.model, {
      requiresGrad: app.meta.model.parameters,
      frozenParams: [],
      loss: app.w.artifacts.LossType.CrossEntropyLoss,
      optimizer: app.w.artifacts.OptimType.AdamW,
      additionalOutputNames: [app.meta.model.output.name],
    }),
  );
  const artBytes = ['trainingModel', 'evalModel', 'optimizerModel', 'checkpoint'].reduce((a, k) => a + app.art[k].byteLength, 0);
  checklist('artifacts', 'done', `(4 artifacts, ${kib(artBytes)}, ${Math.round(performance.now() - t1)} ms)`);

  checklist('baseline', 'active');
  await createSession(app.art.checkpoint);
  const params = await exclusive(() => app.module.getParametersSize(true));
  $('fact-params').textContent = fmtInt(params);
  app.baseline = await evaluate();
  pickExamples();
  showScores();
  chart.reset({ baseline: app.baseline.accuracy });
  checklist('baseline', 'done', `(${pct(app.baseline.accuracy)} on ${app.data.test.n} held-out slanted digits)`);
  $('step-load').classList.add('done');
  badge('load-badge', `ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`, 'ok');

  await offerResume();
  app.phase = 'idle';
  render();
  updateReading();
}

/** state + module + optimizer from checkpoint bytes or a CheckpointState already loaded. */
async function createSession(checkpoint) {
  await exclusive(async () => {
    const { w, art } = app;
    const state = checkpoint instanceof Uint8Array ? await w.CheckpointState.loadCheckpoint(checkpoint) : checkpoint;
    const module = await w.Module.create(art.trainingModel, state, art.evalModel);
    const optimizer = await w.Optimizer.create(art.optimizerModel, module);
    for (const o of [app.scheduler, app.optimizer, app.module, app.state]) if (o) await o.release();
    Object.assign(app, { state, module, optimizer, scheduler: null });
  });
}

async function offerResume() {
  const exists = await exclusive(() => app.w.idb.has(CKPT));
  if (!exists) return;
  try {
    const saved = await exclusive(() => app.w.CheckpointState.loadCheckpoint(CKPT));
    const raw = await exclusive(() => saved.properties.get(SESSION_PROP));
    app.saved = saved;
    app.savedInfo = raw ? JSON.parse(raw) : null;
  } catch (err) {
    showError(new Error(`a saved checkpoint is in this browser but cannot be loaded (${err.message}); "Discard" removes it`));
    app.saved = null;
    app.savedInfo = null;
  }
  const i = app.savedInfo;
  $('resume-text').textContent = i
    ? `Saved ${new Date(i.savedAt).toLocaleString()}: ${pct(i.accuracy)} on held-out digits after ${i.epochs} epoch${i.epochs === 1 ? '' : 's'} on ${fmtInt(i.samples)} samples${i.drawn?.length ? ` (${i.drawn.length} drawn by you)` : ''}.`
    : 'A checkpoint is stored under idb://webtrain-demo/checkpoint.';
  $('btn-resume').hidden = !app.saved;
  $('resume').hidden = false;
  document.body.dataset.resumable = 'true';
}

async function resume() {
  await busy('loading', async () => {
    await createSession(app.saved);
    app.saved = null;
    const i = app.savedInfo ?? {};
    app.drawn = (i.drawn ?? []).map((d) => ({ x: decodeSample(d.x), y: d.y }));
    app.bundled = Boolean(i.bundled);
    app.epochsTrained = i.epochs ?? 0;
    app.savedAt = i.savedAt ?? Date.now();
    if (i.chart) chart.restore(i.chart);
    app.result = { ...(await evaluate()), epochs: app.epochsTrained };
    renderSamples();
    showScores();
    setProgress(1, `Resumed: ${app.epochsTrained} epoch${app.epochsTrained === 1 ? '' : 's'} trained, saved ${new Date(app.savedAt).toLocaleString()}`);
    $('save-text').textContent = `Resumed from ${CKPT} (parameters and optimizer state). Accuracy now: ${pct(app.result.accuracy)}${i.accuracy !== undefined ? ` — saved: ${pct(i.accuracy)}` : ''}.`;
    $('resume').hidden = true;
    document.body.dataset.resumed = 'true';
  });
  updateReading();
}

async function discard() {
  await busy('saving', async () => {
    if (app.saved) await exclusive(() => app.saved.release());
    app.saved = null;
    await exclusive(() => app.w.idb.delete(CKPT));
    $('resume').hidden = true;
  });
}

async function busy(phase, fn) {
  app.phase = phase;
  render();
  try {
    await fn();
    app.phase = 'idle';
  } catch (err) {
    app.phase = 'idle';
    showError(err);
  }
  render();
}

// ---- 2 samples ----------------------------------------------------------------------------------
const pad = {
  canvas: $('pad'),
  strokes: [],
  label: null,
  drawing: false,
  hasInk() {
    return this.strokes.length > 0;
  },
  point(e) {
    const r = this.canvas.getBoundingClientRect();
    return { x: ((e.clientX - r.left) * this.canvas.width) / r.width, y: ((e.clientY - r.top) * this.canvas.height) / r.height };
  },
  paint() {
    const g = this.canvas.getContext('2d');
    g.clearRect(0, 0, this.canvas.width, this.canvas.height);
    g.lineCap = 'round';
    g.lineJoin = 'round';
    g.lineWidth = 34;
    g.strokeStyle = '#172033';
    g.fillStyle = '#172033';
    for (const s of this.strokes) {
      g.beginPath();
      g.moveTo(s[0].x, s[0].y);
      if (s.length === 1) g.lineTo(s[0].x + 0.01, s[0].y);
      for (const p of s.slice(1)) g.lineTo(p.x, p.y);
      g.stroke();
    }
    this.canvas.classList.toggle('has-ink', this.hasInk());
    $('pad-placeholder').hidden = this.hasInk();
  },
  clear() {
    this.strokes = [];
    this.paint();
    updateReading();
    render();
  },
};

pad.canvas.addEventListener('pointerdown', (e) => {
  if (e.button !== 0) return;
  pad.canvas.setPointerCapture?.(e.pointerId);
  pad.drawing = true;
  pad.strokes.push([pad.point(e)]);
  pad.paint();
});
pad.canvas.addEventListener('pointermove', (e) => {
  if (!pad.drawing) return;
  const events = e.getCoalescedEvents?.() ?? [e];
  for (const ev of events.length ? events : [e]) pad.strokes.at(-1).push(pad.point(ev));
  pad.paint();
});
const endStroke = () => {
  if (!pad.drawing) return;
  pad.drawing = false;
  updateReading();
  render();
};
pad.canvas.addEventListener('pointerup', endStroke);
pad.canvas.addEventListener('pointercancel', endStroke);
pad.canvas.addEventListener('lostpointercapture', endStroke);

function drawingFeatures() {
  return features(pad.strokes, $('slant').checked ? app.meta?.slant_px_per_row ?? 0.35 : 0);
}

let readingSeq = 0;
async function updateReading() {
  const seq = ++readingSeq;
  app.readings = seq;
  const x = pad.hasInk() ? drawingFeatures() : new Float32Array(64);
  paintDigit($('preview'), x);
  if (!pad.hasInk() || !app.module || app.phase !== 'idle') {
    $('reads').textContent = '–';
    $('reads').title = '';
    return;
  }
  try {
    const r = await predictOne(x);
    if (seq !== readingSeq) return;
    $('reads').textContent = String(r.digit);
    $('reads').title = `${(100 * r.confidence).toFixed(0)}% sure`;
    $('reads').dataset.digit = r.digit;
    $('reads').dataset.seq = String(seq);
  } catch (err) {
    showError(err);
  }
}

const picker = $('picker');
for (let d = 0; d < 10; d++) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = String(d);
  b.dataset.digit = d;
  b.setAttribute('aria-pressed', 'false');
  b.addEventListener('click', () => pick(d));
  picker.append(b);
}
function pick(d) {
  pad.label = pad.label === d ? null : d;
  for (const x of picker.children) x.setAttribute('aria-pressed', String(Number(x.dataset.digit) === pad.label));
  render();
}
// Keyboard: 0-9 pick the label, Enter adds the drawing, Escape clears the pad.
document.addEventListener('keydown', (e) => {
  const t = e.target;
  if (e.ctrlKey || e.metaKey || e.altKey || t.isContentEditable || /^(SELECT|TEXTAREA)$/.test(t.tagName) || (t.tagName === 'INPUT' && t.type !== 'checkbox')) return;
  if (/^[0-9]$/.test(e.key)) pick(Number(e.key));
  else if (e.key === 'Enter' && !$('btn-add').disabled && e.target.tagName !== 'BUTTON') $('btn-add').click();
  else if (e.key === 'Escape') pad.clear();
  else return;
  e.preventDefault();
});
$('slant').addEventListener('change', () => updateReading());
$('btn-clear').addEventListener('click', () => pad.clear());
$('btn-add').addEventListener('click', () => {
  if (!pad.hasInk() || pad.label === null || !bounds(pad.strokes)) return;
  app.drawn.push({ x: drawingFeatures(), y: pad.label });
  pad.label = null;
  for (const x of picker.children) x.setAttribute('aria-pressed', 'false');
  pad.clear();
  renderSamples();
  render();
});
$('btn-bundle').addEventListener('click', () => {
  app.bundled = true;
  renderSamples();
  render();
});
$('btn-clear-samples').addEventListener('click', () => {
  app.drawn = [];
  app.bundled = false;
  renderSamples();
  render();
});

function thumb(x, label, drawn, onRemove) {
  const div = document.createElement('div');
  div.className = `thumb${drawn ? ' drawn' : ''}`;
  const c = document.createElement('canvas');
  c.width = 32;
  c.height = 32;
  paintDigit(c, x);
  div.append(c, String(label));
  if (onRemove) {
    const b = document.createElement('button');
    b.className = 'x';
    b.type = 'button';
    b.title = 'Remove';
    b.textContent = '×';
    b.addEventListener('click', onRemove);
    div.append(b);
  }
  return div;
}

function renderSamples() {
  const box = $('thumbs');
  box.replaceChildren();
  app.drawn.forEach((s, i) =>
    box.append(
      thumb(s.x, s.y, true, () => {
        if (app.phase !== 'idle') return;
        app.drawn.splice(i, 1);
        renderSamples();
        render();
      }),
    ),
  );
  if (app.bundled) {
    const { train } = app.data;
    const shown = Math.min(train.n, Math.max(0, 23 - app.drawn.length));
    for (let i = 0; i < shown; i++) box.append(thumb(row(train, i), train.y[i], false, null));
    if (train.n > shown) {
      const more = document.createElement('div');
      more.className = 'thumb-more';
      more.innerHTML = `+${train.n - shown}<br>more`;
      more.title = `${train.n - shown} more bundled digits`;
      box.append(more);
    }
  }
  if (!box.children.length) box.innerHTML = '<p class="empty muted">No samples yet: draw one, or add the bundled set.</p>';
}

// ---- 3 fine-tune ----------------------------------------------------------------------------------
const chart = new Chart($('chart'));
app.chart = chart;

function setProgress(frac, text) {
  $('bar').style.width = `${(100 * Math.max(0, Math.min(1, frac))).toFixed(1)}%`;
  $('progress-text').textContent = text;
}

function trainingSet() {
  const { train } = app.data;
  const n = sampleCount();
  const x = new Float32Array(n * 64);
  const y = new Int32Array(n);
  app.drawn.forEach((s, i) => {
    x.set(s.x, i * 64);
    y[i] = s.y;
  });
  if (app.bundled) {
    x.set(train.x, app.drawn.length * 64);
    y.set(train.y, app.drawn.length);
  }
  return { x, y, n };
}

async function fineTune() {
  const epochs = Number($('epochs').value);
  const lr = Number($('lr').value);
  const { x, y, n } = trainingSet();
  const perEpoch = Math.ceil(n / BATCH);
  const totalSteps = perEpoch * epochs;
  const ac = new AbortController();
  app.abort = ac;
  app.phase = 'training';
  render();
  badge('train-badge', 'training…', 'busy');
  chart.reset({ totalSteps, stepsPerEpoch: perEpoch, baseline: app.baseline.accuracy });
  chart.addAccuracy(0, app.result?.accuracy ?? app.baseline.accuracy);
  setProgress(0, `Starting: ${epochs} epochs × ${perEpoch} minibatches`);
  const t0 = performance.now();
  let done = 0;
  let stopped = false;
  try {
    await exclusive(async () => {
      if (app.scheduler) await app.scheduler.release();
      app.scheduler = await app.w.LinearLRScheduler.create(app.optimizer, 0, totalSteps, lr);
    });
    // fit in the worker (js/loop.js): each epoch ends with the held-out personal digits through
    // the eval model (valAccuracy); the shuffles go on from the epochs already trained.
    const first = app.epochsTrained;
    const { test } = app.data;
    try {
      await exclusive(() =>
        app.w.fit(app.module, app.optimizer, {
          x: new Tensor('float32', x, [n, 64]),
          y: new Tensor('int32', y, [n]),
          batchSize: BATCH,
          initialEpoch: first,
          epochs: first + epochs,
          shuffle: true,
          seed: 1,
          scheduler: app.scheduler,
          validation: { x: new Tensor('float32', test.x.slice(), [test.n, 64]), y: new Tensor('int32', test.y.slice(), [test.n]) },
          validationBatchSize: test.n,
          metrics: ['accuracy'],
          signal: ac.signal,
          callbacks: {
            onBatchEnd: (p) => {
              done = (p.epoch - first) * perEpoch + p.batch;
              chart.addLoss(done, p.loss);
              const secs = (performance.now() - t0) / 1000;
              setProgress(done / totalSteps, `Epoch ${p.epoch - first + 1}/${epochs} · step ${done}/${totalSteps} · loss ${p.epochLoss.toFixed(3)} · ${secs.toFixed(1)} s`);
            },
            onEpochEnd: (e) => {
              app.epochsTrained++;
              chart.addAccuracy(done, e.valAccuracy);
              $('acc-after').textContent = pct(e.valAccuracy);
            },
          },
        }),
      );
    } catch (err) {
      if (err.code !== 'AbortError') throw err;
      stopped = true;
    }
    const last = await evaluate();
    app.result = { ...last, epochs: app.epochsTrained };
    app.savedAt = null;
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    setProgress(stopped ? done / totalSteps : 1, `${stopped ? 'Stopped' : 'Done'}: ${done} steps in ${secs} s · ${pct(app.baseline.accuracy)} → ${pct(last.accuracy)} on held-out digits`);
    showScores();
    $('save-text').textContent = 'Not saved yet.';
  } finally {
    app.abort = null;
    app.phase = 'idle';
    render();
    updateReading();
  }
}

function pickExamples() {
  const { test } = app.data;
  const wrong = [];
  const right = [];
  for (let i = 0; i < test.n; i++) (app.baseline.preds[i] === test.y[i] ? right : wrong).push(i);
  const nWrong = Math.min(wrong.length, Math.round(EXAMPLES * 0.65));
  app.examples = [...wrong.slice(0, nWrong), ...right.slice(0, EXAMPLES - nWrong)].sort((a, b) => a - b);
}

function showScores() {
  const { test } = app.data;
  const b = app.baseline;
  const r = app.result;
  $('acc-before').textContent = pct(b.accuracy);
  $('acc-before').dataset.value = String(b.accuracy);
  $('acc-before-detail').textContent = `${b.hits} of ${test.n} held-out digits`;
  $('acc-after').textContent = r ? pct(r.accuracy) : '–';
  $('acc-after').dataset.value = r ? String(r.accuracy) : '';
  $('acc-after-detail').textContent = r ? `${r.hits} of ${test.n} · ${r.epochs} epoch${r.epochs === 1 ? '' : 's'}` : 'fine-tune to see';
  const grid = $('examples');
  grid.replaceChildren();
  for (const i of app.examples) {
    const ex = document.createElement('div');
    ex.className = 'ex';
    const c = document.createElement('canvas');
    c.width = 40;
    c.height = 40;
    paintDigit(c, row(test, i));
    const truth = test.y[i];
    const p = document.createElement('div');
    p.className = 'p';
    const before = b.preds[i];
    const span = (v, cls) => `<span class="${cls}">${v}</span>`;
    const after = r ? r.preds[i] : null;
    p.innerHTML = `${span(before, before === truth ? 'ok' : 'no')} → ${after === null ? span('?', 'pending') : span(after, after === truth ? 'ok' : 'no')}`;
    ex.title = `true label ${truth}`;
    ex.append(c, p);
    grid.append(ex);
  }
}

$('btn-train').addEventListener('click', () => fineTune().catch(showError));
$('btn-stop').addEventListener('click', () => app.abort?.abort());

// ---- 4 save / export ----------------------------------------------------------------------------------
async function save() {
  await busy('saving', async () => {
    const savedAt = Date.now();
    const info = {
      savedAt,
      accuracy: app.result.accuracy,
      hits: app.result.hits,
      baseline: app.baseline.accuracy,
      epochs: app.epochsTrained,
      samples: sampleCount(),
      bundled: app.bundled,
      drawn: app.drawn.map((d) => ({ x: encodeSample(d.x), y: d.y })),
      chart: chart.toJSON(),
    };
    await exclusive(async () => {
      await app.state.properties.set(SESSION_PROP, JSON.stringify(info));
      await app.w.CheckpointState.saveCheckpoint(app.state, CKPT, { includeOptimizerState: true });
    });
    const entry = (await exclusive(() => app.w.idb.list('webtrain-demo/'))).find((e) => e.url === CKPT);
    app.savedAt = savedAt;
    $('save-text').textContent = `Saved to ${CKPT}${entry ? ` (${kib(entry.size)})` : ''} at ${new Date(savedAt).toLocaleTimeString()}: reload the page and choose “Resume”.`;
  });
}

async function exportModel() {
  await busy('saving', async () => {
    const bytes = await exclusive(() => app.module.exportModelForInferencing([app.meta.model.output.name]));
    const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'digits-finetuned.onnx';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    $('save-text').textContent = `Downloaded digits-finetuned.onnx (${kib(bytes.byteLength)}): a plain ONNX model, input “input” [batch, 64] → “output” [batch, 10] logits.`;
  });
}

async function forget() {
  await busy('saving', async () => {
    await exclusive(() => app.w.idb.delete(CKPT));
    app.savedAt = null;
    $('save-text').textContent = 'Deleted the saved checkpoint from this browser.';
  });
}

$('btn-save').addEventListener('click', save);
$('btn-export').addEventListener('click', exportModel);
$('btn-forget').addEventListener('click', forget);
$('btn-resume').addEventListener('click', resume);
$('btn-discard').addEventListener('click', discard);

// ---- go ----------------------------------------------------------------------------------------
renderSamples();
pad.paint();
paintDigit($('preview'), new Float32Array(64));
load().catch((err) => {
  app.phase = 'error';
  for (const li of document.querySelectorAll('#load-list li.active')) li.className = 'failed';
  badge('load-badge', 'failed', 'err');
  showError(err);
  render();
});
