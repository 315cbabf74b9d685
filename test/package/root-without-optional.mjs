// Loads the package root from ESM and from CommonJS while the packages only the subpaths and the
// CLI use cannot be resolved (a resolve hook for import, Module._resolveFilename for require).
// Prints whether each blocked package really is unreachable and what the root gave.
import Module, { createRequire, register } from 'node:module';

const BLOCKED = ['hono', '@hono/node-server', 'commander', 'prom-client', 'pino', 'pino-pretty', 'pdfkit', 'stripe'];
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

register(
  `data:text/javascript,${encodeURIComponent(`
    const blocked = new Set(${JSON.stringify(BLOCKED)});
    export async function resolve(specifier, context, next) {
      const name = specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
      if (blocked.has(name)) {
        const error = new Error("Cannot find package '" + specifier + "' (blocked by the test)");
        error.code = 'ERR_MODULE_NOT_FOUND';
        throw error;
      }
      return next(specifier, context);
    }`)}`,
);
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function blockOptional(request, ...rest) {
  if (BLOCKED.includes(packageOf(request))) {
    const error = new Error(`Cannot find module '${request}' (blocked by the test)`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolveFilename.call(this, request, ...rest);
};
const require = createRequire(import.meta.url);

const blockedForImport = [];
const blockedForRequire = [];
for (const name of BLOCKED) {
  if (
    await import(name).then(
      () => false,
      () => true,
    )
  )
    blockedForImport.push(name);
  try {
    require(name);
  } catch {
    blockedForRequire.push(name);
  }
}

async function useRoot(root) {
  const engine = root.createBillingEngine({ storage: memory.createMemoryStorage() });
  await engine.migrate();
  const created = await engine.sites.create({ subdomain: 'plain', currency: 'USD' });
  return created.site.subdomain;
}
const memory = await import('billing-engine/adapters/memory');
console.log(
  JSON.stringify({
    blockedForImport,
    blockedForRequire,
    esm: await useRoot(await import('billing-engine')),
    cjs: await useRoot(require('billing-engine')),
    chargifyEsm: typeof (await import('billing-engine/chargify')).serializeCustomer,
    chargifyCjs: typeof require('billing-engine/chargify').serializeCustomer,
  }),
);
