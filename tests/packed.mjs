// Test helper: the package as a user installs it. `npm pack` the repository and install the
// tarball into an empty project (offline, with a fresh npm cache: the package has no runtime
// dependencies, so nothing comes from the registry or an earlier install).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../', import.meta.url));

/** Runs a command; { status, stdout, stderr, output }. */
export function run(cmd, args, cwd, { timeout = 60_000, env = {} } = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, npm_config_update_notifier: 'false', ...env } });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, output: `${r.stdout}${r.stderr}`.trim() };
}

export function ok(r, what) {
  assert.equal(r.status, 0, `${what} exited with ${r.status}:\n${r.output}`);
  return r;
}

/**
 * A temporary directory holding the tarball, an npm cache and `project/` (package.json with
 * "type": "module", webtrain installed from the tarball). Returns { dir, project }.
 */
export async function installPacked(prefix) {
  for (const f of ['dist/webtrain-core.mjs', 'dist/webtrain-core.wasm']) {
    assert.ok(existsSync(join(root, f)), `${f} is missing: the package ships the WebAssembly build; run \`npm run build\` first`);
  }
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const project = join(dir, 'project');
  const npmFlags = ['--cache', join(dir, 'npm-cache'), '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'];
  const [{ filename }] = JSON.parse(ok(run('npm', ['pack', '--json', '--pack-destination', dir, ...npmFlags], root), 'npm pack').stdout);
  await mkdir(project);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'webtrain-user', version: '1.0.0', private: true, type: 'module' }, null, 2));
  ok(run('npm', ['install', join(dir, filename), ...npmFlags], project), `npm install ${filename} --offline`);
  return { dir, project };
}
