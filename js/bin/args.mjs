// Command-line plumbing for `webtrain`: a small argv parser, usage errors, byte sizes and a
// progress indicator on stderr. No dependencies.

/** A mistake in how the command was called: printed with a usage hint, exit code 2. */
export class UsageError extends Error {
  constructor(message, command) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

/**
 * Parses `argv` against `spec`: { optionName: { type: 'string' | 'list' | 'flag', short?, choices? } }.
 * Accepts `--name value`, `--name=value`, `-x value`, repeated list options (values also
 * comma-separated) and `--` (everything after it is positional). Returns
 * { options: { optionName: value }, positionals: [...] }; option names map to camelCase keys.
 */
export function parseArgs(argv, spec, command) {
  const byLong = new Map();
  const byShort = new Map();
  for (const [name, o] of Object.entries(spec)) {
    byLong.set(name, name);
    if (o.short) byShort.set(o.short, name);
  }
  const options = {};
  const positionals = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    let name;
    let value;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const key = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      if (eq >= 0) value = arg.slice(eq + 1);
      name = byLong.get(key);
      if (!name) throw new UsageError(`unknown option '--${key}'${suggest(key, [...byLong.keys()])}`, command);
    } else {
      name = byShort.get(arg.slice(1, 2));
      if (!name) throw new UsageError(`unknown option '${arg}'`, command);
      if (arg.length > 2) value = arg.slice(2);
    }
    const o = spec[name];
    const key = camel(name);
    if (o.type === 'flag') {
      if (value !== undefined) throw new UsageError(`option '--${name}' takes no value`, command);
      options[key] = true;
      continue;
    }
    if (value === undefined) {
      if (i + 1 >= argv.length || (argv[i + 1].startsWith('-') && argv[i + 1] !== '-' && !/^-\d/.test(argv[i + 1])))
        throw new UsageError(`option '--${name}' needs a value`, command);
      value = argv[++i];
    }
    if (o.choices && !o.choices.includes(value))
      throw new UsageError(`option '--${name}': '${value}' is not one of ${o.choices.join(', ')}`, command);
    if (o.type === 'list') {
      const items = value.split(',').map((s) => s.trim()).filter(Boolean);
      if (!items.length) throw new UsageError(`option '--${name}' needs at least one name`, command);
      options[key] = [...(options[key] ?? []), ...items];
    } else {
      if (key in options) throw new UsageError(`option '--${name}' given twice`, command);
      options[key] = value;
    }
  }
  return { options, positionals };
}

function camel(name) {
  return name.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
}

function suggest(key, names) {
  const close = names.find((n) => n.startsWith(key) || key.startsWith(n) || distance(n, key) <= 2);
  return close ? ` (did you mean '--${close}'?)` : '';
}

function distance(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
  return d[a.length][b.length];
}

/** 1234567 -> "1.2 MiB". */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n;
  let u = -1;
  do {
    v /= 1024;
    u++;
  } while (v >= 1024 && u < units.length - 1);
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

/** 1234567 -> "1,234,567". */
export function formatCount(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * Progress on stderr: a spinner with the current step when stderr is a TTY (cleared when done),
 * plain "webtrain: step..." lines otherwise. The core runs synchronously inside a step, so the
 * spinner shows which step is under way rather than animating through it.
 */
export class Progress {
  #tty;
  #timer = null;
  #label = '';
  #frame = 0;
  #t0 = 0;
  #quiet;

  constructor({ stream = process.stderr, quiet = false } = {}) {
    this.stream = stream;
    this.#tty = Boolean(stream.isTTY) && process.env.TERM !== 'dumb';
    this.#quiet = quiet;
  }

  /** Runs `fn` as one named step. */
  async step(label, fn) {
    this.start(label);
    try {
      return await fn();
    } finally {
      this.stop();
    }
  }

  start(label) {
    if (this.#quiet) return;
    this.#label = label;
    this.#t0 = Date.now();
    if (!this.#tty) {
      this.stream.write(`webtrain: ${label}...\n`);
      return;
    }
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), 80);
    this.#timer.unref?.();
  }

  stop() {
    if (this.#quiet || !this.#tty) return;
    clearInterval(this.#timer);
    this.#timer = null;
    this.stream.write('\r\x1b[2K');
  }

  #draw() {
    const frames = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
    const secs = ((Date.now() - this.#t0) / 1000).toFixed(1);
    let line = `${frames[this.#frame++ % frames.length]} ${this.#label} (${secs}s)`;
    const cols = this.stream.columns || 80;
    if (line.length > cols - 1) line = `${line.slice(0, cols - 2)}…`;
    this.stream.write(`\r\x1b[2K${line}`);
  }
}
