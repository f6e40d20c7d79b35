// fit's `progress: true`: one updating line on stderr when it is a terminal (a bar over the
// epoch's batches, the loss and metrics so far), plain lines (one per epoch) otherwise. Where
// there is no process.stderr (a page, a worker) the epoch lines go to console.log.

const fmt = (v) => (typeof v !== 'number' ? String(v) : v === 0 || (Math.abs(v) >= 1e-3 && Math.abs(v) < 1e4) ? v.toFixed(4) : v.toExponential(3));
const SKIP = new Set(['epoch', 'seconds', 'step', 'totalSteps', 'epochs', 'batch', 'batches', 'epochLoss', 'epochDone', 'elapsedMs', 'loss', 'skipped', 'lr']);

/** `name value` pairs of the numbers in `o` worth showing (loss first). */
function pairs(o, loss) {
  const out = [`loss ${fmt(loss)}`];
  for (const [k, v] of Object.entries(o)) if (!SKIP.has(k) && typeof v === 'number') out.push(`${k} ${fmt(v)}`);
  return out.join(' ');
}

/**
 * The epoch as fit numbers it (from 0, as initialEpoch, the history and the checkpoint's {epoch}
 * do), then how many of the epochs up to `epochs` (exclusive) it is.
 */
const epochLabel = (epoch, epochs) => `epoch ${epoch} (${epoch + 1}/${epochs})`;

/** option: true, or { stream, width } (stream: a Writable with isTTY and columns, e.g. process.stderr). */
export function progressBar(option) {
  const stream = (typeof option === 'object' && option.stream) || globalThis.process?.stderr || null;
  const tty = !!stream?.isTTY;
  const width = (typeof option === 'object' && option.width) || 24;
  const write = stream ? (s) => stream.write(s) : (s) => s.trim() && console.log(s.trim());
  let open = false; // a bar line is on the screen, without its newline
  let shown = 0;
  return {
    batch(p) {
      if (!tty) return;
      const now = performance.now();
      if (!p.epochDone && now - shown < 100) return;
      shown = now;
      const frac = p.batches ? p.batch / p.batches : 0;
      const full = Math.round(frac * width);
      const bar = p.batches ? `[${'='.repeat(Math.max(0, full - 1))}${full ? '>' : ''}${' '.repeat(width - full)}] ${p.batch}/${p.batches}` : `batch ${p.batch}`;
      let line = `${epochLabel(p.epoch, p.epochs)} ${bar} ${pairs(p, p.epochLoss)} ${(p.elapsedMs / 1000).toFixed(1)}s`;
      if (stream.columns) line = line.slice(0, stream.columns - 1);
      write(`\r\x1b[K${line}`);
      open = true;
    },
    epoch(entry, epochs) {
      const line = `${epochLabel(entry.epoch, epochs)} ${pairs(entry, entry.loss)}${entry.skipped ? ` skipped ${entry.skipped}` : ''} ${entry.seconds.toFixed(1)}s`;
      write(`${tty ? '\r\x1b[K' : ''}${line}\n`);
      open = false;
    },
    done() {
      if (open) write('\n');
      open = false;
    },
  };
}
