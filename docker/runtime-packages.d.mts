/** The `node_modules/...` folders of `names` and their dependency closure in a package-lock.json object, sorted. */
export function runtimeFolders(lock: unknown, names: readonly string[]): string[];
