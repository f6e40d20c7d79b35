// Shared by the benchmark scripts (big-base.mjs, big-chromium.mjs, smollm-lora.mjs): their
// command-line options and the Chromium renderers' memory.
import { readdir, readFile } from 'node:fs/promises';

/** Options of `args` (spliced out as read): flag('--steps', 5) -> its value; bool('--float16'). */
export function options(args) {
  const flag = (name, dflt) => {
    const i = args.indexOf(name);
    if (i < 0) return dflt;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
  };
  const bool = (name) => args.includes(name) && !!args.splice(args.indexOf(name), 1);
  return { flag, bool };
}

/** RSS (bytes) of Chromium's renderer processes now, from /proc. */
export async function rendererRss() {
  let sum = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('--type=renderer')) continue;
      const m = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
      if (m) sum += Number(m[1]) * 1024;
    } catch { /* gone */ }
  }
  return sum;
}
