// Lifetimes of the objects that own memory in the wasm heap (CheckpointState, Module,
// Optimizer, InferenceSession). release() frees at once; an object dropped without release()
// is freed once garbage-collected, through a FinalizationRegistry. Each C object has a record
// here, separate from its JS wrapper (a registry's held value must not reach the wrapper, or
// the wrapper would never be collected): the wrapper holds the record, the registry holds it too.
//
// Order: a module and an optimizer borrow their checkpoint state (the C core frees the state
// after them), so the state's record counts its users and is freed when it is dropped (released
// or collected) and its last user is gone, whichever comes last; wrappers are collected in any
// order.

const registry = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((life) => life.free()) : null;

/** One C object: `h` its handle (0 once freed), `freeFn(h)` frees it, then `after()` (its users' bookkeeping). */
export class Life {
  #freeFn;
  #after;
  constructor(h, freeFn, after = null) {
    this.h = h;
    this.#freeFn = freeFn;
    this.#after = after;
  }

  /** Frees the C object (once); a release() or the registry's callback. */
  free() {
    const h = this.h;
    if (!h) return false;
    this.h = 0;
    this.#freeFn(h);
    this.#after?.();
    return true;
  }

  /** Frees the C object when `owner` (the JS wrapper) is collected without release(). */
  watch(owner) {
    registry?.register(owner, this, this);
    return this;
  }

  /** release(): frees now, and the registry forgets it. */
  release() {
    registry?.unregister(this);
    return this.free();
  }
}

/**
 * A checkpoint state: freed once it is dropped (released, or its wrapper collected) and no
 * module or optimizer uses it any more.
 */
export class StateLife {
  #freeFn;
  #users = 0;
  #dropped = false;
  constructor(h, freeFn) {
    this.raw = h;
    this.#freeFn = freeFn;
  }

  get dropped() {
    return this.#dropped;
  }

  /** A module or optimizer is built on it. */
  retain() {
    this.#users++;
  }

  /** That module or optimizer was freed. */
  unref() {
    this.#users--;
    this.#maybeFree();
  }

  /** Released, or collected: what is left is its users' (the registry's callback, release()). */
  free() {
    this.#dropped = true;
    this.#maybeFree();
  }

  watch(owner) {
    registry?.register(owner, this, this);
    return this;
  }

  release() {
    registry?.unregister(this);
    this.free();
  }

  #maybeFree() {
    if (!this.#dropped || this.#users > 0 || !this.raw) return;
    const h = this.raw;
    this.raw = 0;
    this.#freeFn(h);
  }
}
