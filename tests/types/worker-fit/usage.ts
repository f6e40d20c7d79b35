// w.fit (web/worker-fit.d.ts, merged into web/index.d.ts's WebtrainWorker) as a page would call it:
// type-checked by tests/js/fit.test.mjs (`tsc --noEmit -p tests/types/worker-fit`), never executed.
import * as webtrain from '../../../web/index.js';
async function run() {
  const w = await webtrain.worker();
  const w2 = await webtrain.worker({ threads: 'auto', threadedUrl: '/mt/webtrain-core-mt.mjs' });
  const info: webtrain.RuntimeInfo = await w2.runtimeInfo();
  const threads: number = info.threads;
  void threads;
  const state = await w.CheckpointState.loadCheckpoint('idb://x');
  const module = await w.Module.create('a.onnx', state, 'b.onnx');
  const optimizer = await w.Optimizer.create('c.onnx', module);
  const x = new webtrain.Tensor('float32', new Float32Array(4), [2, 2]);
  const r: webtrain.FitResult = await w.fit(module, optimizer, { x, y: x, validation: { x, y: x }, metrics: ['accuracy'], checkpoint: 'idb://run', callbacks: { onEpochEnd: (e) => e.valLoss !== undefined } });
  // @ts-expect-error no metric functions in a worker
  await w.fit(module, optimizer, { x, y: x, metrics: [() => 1] });
  // @ts-expect-error checkpoints in a worker are idb://
  await w.fit(module, optimizer, { x, y: x, checkpoint: '/tmp/a' });
  const o: webtrain.WorkerFitOptions = { x };
  return [r.history.length, o];
}
void run;
