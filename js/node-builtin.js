// Node built-ins for the Node-only branches (file paths, atomic writes). The specifier is
// computed at run time so bundlers building for browsers (Vite, Rollup, webpack, esbuild) do
// not try to resolve node:fs & co. — which otherwise makes them stub the modules out and warn
// ("externalized for browser compatibility"). Only ever called where Node is detected.

/** Whether this runs in Node (not a browser, nor a worker in one). */
export const isNode = typeof process !== 'undefined' && process.versions?.node != null;

/** import('node:' + name), invisible to bundlers. */
export function importNode(name) {
  const specifier = `node:${name}`;
  return import(/* @vite-ignore */ /* webpackIgnore: true */ specifier);
}

/** import(name) of an optional npm package (the `webgpu` bindings), invisible to bundlers. */
export function importPackage(name) {
  return import(/* @vite-ignore */ /* webpackIgnore: true */ name);
}
