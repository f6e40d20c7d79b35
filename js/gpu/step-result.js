// A step's outputs on the webgpu backend: a thenable that reads them back from the GPU when it
// is first awaited (then), not before, so a step whose outputs nobody reads is never read back,
// and a step's outputs can be read while the next step computes. `await` and the Promise
// methods take it as a Promise. No device code: the Module checks for it on any backend.
export class GpuStepResult {
  #read;
  #wrap;
  #promise = null;

  /**
   * submitted: a Promise settled once the step is on the GPU's queue; read(): a Promise of
   * the outputs, called once; wrap(error): the error either rejects with.
   */
  constructor(submitted, read, wrap = (e) => e) {
    this.#read = read;
    this.#wrap = wrap;
    this.submitted = submitted.catch((e) => Promise.reject(wrap(e)));
    this.submitted.catch(() => {}); // reported by a read, or by the trainer's next call
  }

  /** The same step, its errors (submit's and read's) through wrap. */
  wrap(wrap) {
    return new GpuStepResult(this.submitted, () => this.#outputs(), wrap);
  }

  /** The same step, its outputs given to f when they are read. */
  map(f) {
    return new GpuStepResult(this.submitted, () => this.#outputs().then(f));
  }

  #outputs() {
    this.#promise ??= this.#read().catch((e) => Promise.reject(this.#wrap(e)));
    return this.#promise;
  }

  then(onFulfilled, onRejected) {
    return this.#outputs().then(onFulfilled, onRejected);
  }

  catch(onRejected) {
    return this.then(undefined, onRejected);
  }

  finally(onFinally) {
    return this.#outputs().finally(onFinally);
  }

  get [Symbol.toStringTag]() {
    return 'GpuStepResult';
  }
}
