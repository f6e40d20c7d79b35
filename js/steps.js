// fit's training steps, in order: module.run; then, its loss finite, optimizer.step and the
// scheduler's step; lazyResetGrad either way. On wasm a step is done before the next begins.
// On webgpu the steps are pipelined one deep: step n+1 is submitted before step n's outputs
// are read, so the GPU computes while step n's loss comes back, and a step waits for nothing
// but its own submit. Nothing of step n+1 depends on what step n's loss decides: the GPU
// checks that loss and skips step n's update itself (js/gpu/step-checks.js); the optimizer's
// count and the scheduler catch up when the loss is read, before step n+1's update. A loop that
// stops after step n (its loss not finite with onNonFinite 'throw' or 'stop', a callback, an
// abort) takes step n+1 back: the module is as if it never ran.
import { GpuStepResult } from './gpu/step-result.js';

/** The core's refusal of a non-finite loss (module.run throws it, discarding the gradients). */
export const NON_FINITE = /the loss is (NaN|infinite) at this train step/;

export const outputsOf = (out) => (Array.isArray(out) ? out : [out]);
export const scalar = (t) => (t && t.data && t.data.length ? Number(t.data[0]) : NaN);

export class TrainSteps {
  #inflight = null; // webgpu: { item, result, committed } submitted, its outputs not read yet

  constructor(module, optimizer, scheduler, onNonFinite) {
    Object.assign(this, { module, optimizer, scheduler, onNonFinite });
  }

  /**
   * Starts the step of `batch` (`item`: the caller's, given back with its outcome). Returns the
   * steps finished by now, [{ item, outs }] (outs null: skipped, its loss not finite): on wasm
   * this one, on webgpu the one before it. A loss that is not finite with onNonFinite 'throw'
   * is thrown. The caller then commits the step (commit), or stops (cancel).
   */
  async push(item, batch) {
    let result;
    try {
      result = this.module.run(...batch); // on wasm: the outputs, or a throw
    } catch (e) {
      result = Promise.reject(e);
    }
    if (!(result instanceof GpuStepResult)) return [...(await this.flush()), { item, outs: await this.#apply(result) }];
    await result.submitted;
    const prev = this.#inflight;
    this.#inflight = { item, result, committed: false };
    return prev ? [await this.#settle(prev)] : [];
  }

  /** The step pushed last goes on: its optimizer update (on wasm, done already). */
  async commit() {
    const f = this.#inflight;
    if (!f || f.committed) return;
    f.committed = true;
    await this.optimizer.step();
    this.module.lazyResetGrad();
  }

  /** The step in flight, read: [{ item, outs }], or [] when none. */
  async flush() {
    const f = this.#inflight;
    if (!f) return [];
    this.#inflight = null;
    return [await this.#settle(f)];
  }

  /** The loop stops: a step in flight that was not committed is taken back. */
  async cancel() {
    const f = this.#inflight;
    this.#inflight = null;
    if (f && !f.committed) await this.module._takeBack();
  }

  /** A wasm step's outputs (or a Promise of them): its update applied when its loss is finite. */
  async #apply(pending) {
    const outs = await this.#outputs(pending);
    if (outs && (this.onNonFinite === 'throw' || Number.isFinite(scalar(outs[0])))) {
      await this.optimizer.step();
      this.scheduler?.step();
      this.module.lazyResetGrad();
      return outs;
    }
    this.module.lazyResetGrad();
    return null;
  }

  /** A webgpu step's outputs read (its update already submitted): the scheduler's step. */
  async #settle({ item, result }) {
    let outs;
    try {
      outs = await this.#outputs(result);
    } catch (e) {
      await this.cancel();
      throw e;
    }
    if (outs) this.scheduler?.step();
    return { item, outs };
  }

  /** The outputs, or null for a loss that is not finite (thrown with onNonFinite 'throw'). */
  async #outputs(pending) {
    try {
      return outputsOf(await pending);
    } catch (e) {
      if (this.onNonFinite === 'throw' || !NON_FINITE.test(e?.message)) throw e;
      return null;
    }
  }
}
