// The builder behind onnxblock: adds nodes, constants and target inputs to the model held by a
// generator handle in the C core (the custom-loss path of generateArtifacts, and buildModel).
import { WebtrainError } from './core.js';
import { Tensor } from './tensor.js';
import { DType } from './abi.js';
import { ModelRecord } from './inside.js';

/**
 * fn(builder) on a fresh generator handle holding the model `bytes`, or the model a ModelRecord
 * holds in the heap (js/inside.js: not copied again), shapes inferred; the handle is freed when
 * fn settles. `context` prefixes the errors of creating the handle and, when
 * `loadContext` is true, of loading the model; `external` reads its external data (js/external.js);
 * `keepExternal` holds float and float16 initializers stored in external data by reference (not read).
 */
export async function withGenerator(core, bytes, { context, loadContext = false, external = null, keepExternal = false }, fn) {
  const m = core.m;
  const gen = core.handle(m._wtw_gen_new(), context);
  try {
    if (keepExternal) m._wtw_gen_set_keep_external(gen, 1);
    const load = () => {
      if (!(bytes instanceof ModelRecord)) return core.withBytes(bytes, (p, n) => m._wtw_gen_load(gen, p, n));
      return bytes.h ? m._wtw_gen_load_record(gen, bytes.h) : m._wtw_gen_load(gen, bytes.p, bytes.n); // (no record: the parser says why)
    };
    core.check(external ? external.run(load) : load(), loadContext ? context : undefined);
    return await fn(new Builder(core, gen));
  } finally {
    m._wtw_gen_free(gen);
  }
}

/** Adds onnxblock nodes to the model held by a generator handle. */
export class Builder {
  constructor(core, gen) {
    this.core = core;
    this.gen = gen;
    this.count = 0;
  }

  /** fn(...pointers) with C-string copies of `strings` (core.withStrings). */
  with(strings, fn) {
    return this.core.withStrings(strings, fn);
  }

  fresh(what) {
    let name;
    do name = `onnxblock/${what}_${this.count++}`;
    while (this.with([name], (p) => this.core.m._wtw_gen_has_value(this.gen, p)));
    return name;
  }

  node(opType, inputs, attrs = {}, domain = '', nOut = 1) {
    const m = this.core.m;
    for (const i of inputs) if (typeof i !== 'string') throw new WebtrainError(`onnxblock ${opType}: inputs are value names (strings); got ${typeof i}`);
    const outs = Array.from({ length: nOut }, () => this.fresh(opType));
    const name = `${outs[0]}_node`;
    const node = this.with([opType, domain, name, inputs.join('\0'), outs.join('\0')], (pt, pd, pn, pi, po) =>
      m._wtw_gen_add_node(this.gen, pt, pd, pn, pi, inputs.length, po, nOut),
    );
    if (node < 0) throw new WebtrainError(this.core.lastError());
    for (const [k, v] of Object.entries(attrs)) this.attr(node, k, v);
    return nOut === 1 ? outs[0] : outs;
  }

  attr(node, name, v) {
    const m = this.core.m;
    const rc = this.with([name], (pn) => {
      if (typeof v === 'string') return this.with([v], (pv) => m._wtw_gen_attr_string(this.gen, node, pn, pv));
      if (Array.isArray(v)) {
        const p = this.core.copyInF64(v);
        try {
          return m._wtw_gen_attr_ints(this.gen, node, pn, p, v.length);
        } finally {
          this.core.free(p);
        }
      }
      if (Number.isInteger(v)) return m._wtw_gen_attr_int(this.gen, node, pn, v);
      return m._wtw_gen_attr_float(this.gen, node, pn, v);
    });
    this.core.check(rc, `attribute '${name}'`);
  }

  /** A Constant node holding float value(s): a scalar for a number, 1-D for an array. */
  constant(value) {
    const arr = Float32Array.from(Array.isArray(value) || ArrayBuffer.isView(value) ? value : [value]);
    const scalar = !(Array.isArray(value) || ArrayBuffer.isView(value));
    const out = this.fresh('Constant');
    const m = this.core.m;
    const node = this.with(['Constant', '', `${out}_node`, '', out], (pt, pd, pn, pi, po) => m._wtw_gen_add_node(this.gen, pt, pd, pn, pi, 0, po, 1));
    if (node < 0) throw new WebtrainError(this.core.lastError());
    const dims = this.core.copyInF64(scalar ? [] : [arr.length]);
    try {
      this.core.check(this.core.withBytes(arr, (data) => this.with(['value'], (pn) => m._wtw_gen_attr_tensor(this.gen, node, pn, DType.FLOAT, scalar ? 0 : 1, dims, data))));
    } finally {
      this.core.free(dims);
    }
    return out;
  }

  reduce(opType, x, axes, keepdims) {
    if (!axes || !axes.length) return this.node(opType, [x], { keepdims: keepdims ? 1 : 0 });
    return this.node(opType, [x], { keepdims: keepdims ? 1 : 0, axes: Array.from(axes) });
  }

  /** A target graph input shaped like `like` (or without axis `drop`), made once per name. */
  targetLike(name, like, type, drop = -1) {
    const m = this.core.m;
    if (this.with([name], (p) => m._wtw_gen_has_value(this.gen, p))) return name;
    const rc = this.with([name, like], (pn, pl) => m._wtw_gen_add_input_like(this.gen, pn, pl, type ? Tensor.typeCode(type) : DType.UNDEFINED, drop));
    this.core.check(rc, `target '${name}'`);
    return name;
  }

  outputs() {
    const m = this.core.m;
    return Array.from({ length: m._wtw_gen_output_count(this.gen) }, (_, i) => this.core.string(m._wtw_gen_output_name(this.gen, i)));
  }

  /**
   * One of the core's built-in losses (the same graph generateArtifacts builds for a LossType) on
   * value `input`; `target` names the target input (reused if it exists). Returns the loss name.
   */
  lossBlock(type, input, target, { reduction = 'mean', ignoreIndex, weight, posWeight } = {}) {
    const { core } = this;
    const m = core.m;
    const [w, pw] = [weight, posWeight].map((x) => (x ? Float32Array.from(x) : null));
    const name = core.withBytes(w, (pwt) => core.withBytes(pw, (ppw) => this.with([input, target ?? '', reduction], (pi, pt, pr) =>
      m._wtw_gen_loss_block(this.gen, type, pi, pt, pr, ignoreIndex !== undefined ? 1 : 0, ignoreIndex ?? 0, pwt, w?.length ?? 0, ppw, pw?.length ?? 0),
    )));
    if (!name) throw new WebtrainError(core.lastError());
    return core.string(name);
  }
}

