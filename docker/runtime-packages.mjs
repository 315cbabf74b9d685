#!/usr/bin/env node
/**
 * Prints, one per line, the `node_modules/...` folders of the named packages and of everything they
 * depend on, as package-lock.json places them. The Dockerfile's build stage uses it to carry the
 * packages the server needs at run time but that `npm ci --omit=dev` leaves out (the storage
 * drivers are optional peers and dev dependencies of the library; the logging and metrics packages
 * are dev dependencies of it too) into the runtime stage, already built, with no `npm install`.
 *
 *   node docker/runtime-packages.mjs [--lock package-lock.json] pg kysely better-sqlite3 ...
 */
import { readFileSync } from 'node:fs';

/**
 * The lock's folder of `name` as seen from the package at `from` (a lock path such as
 * `node_modules/pg`, or '' for the root): the nearest `node_modules/name` going up, as Node resolves it.
 */
function locate(packages, from, name) {
  let base = from;
  for (;;) {
    const candidate = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    if (packages[candidate] !== undefined) return candidate;
    if (base === '') return undefined;
    const up = base.lastIndexOf('/node_modules/');
    base = up === -1 ? '' : base.slice(0, up);
  }
}

/** The folders of `names` and their dependency closure in the lock `lock`, sorted. */
export function runtimeFolders(lock, names) {
  const packages = lock.packages ?? {};
  const found = new Set();
  const queue = [];
  for (const name of names) {
    const at = locate(packages, '', name);
    if (at === undefined) throw new Error(`${name} is not in the lock file`);
    queue.push(at);
  }
  while (queue.length > 0) {
    const at = queue.pop();
    if (found.has(at)) continue;
    found.add(at);
    const entry = packages[at];
    const optional = new Set(Object.keys(entry.optionalDependencies ?? {}));
    for (const dependency of [
      ...Object.keys(entry.dependencies ?? {}),
      ...optional,
      ...Object.keys(entry.peerDependencies ?? {}),
    ]) {
      const next = locate(packages, at, dependency);
      // An optional dependency for another platform, or an optional peer nobody installed.
      if (next === undefined) {
        if (optional.has(dependency) || entry.peerDependenciesMeta?.[dependency]?.optional === true) continue;
        if (Object.hasOwn(entry.peerDependencies ?? {}, dependency)) continue;
        throw new Error(`${dependency} (needed by ${at}) is not in the lock file`);
      }
      queue.push(next);
    }
  }
  return [...found].sort();
}

const isMain = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const args = process.argv.slice(2);
  const lockAt = args.indexOf('--lock');
  const lockFile = lockAt === -1 ? 'package-lock.json' : args.splice(lockAt, 2)[1];
  const lock = JSON.parse(readFileSync(lockFile, 'utf8'));
  for (const folder of runtimeFolders(lock, args)) console.log(folder);
}
