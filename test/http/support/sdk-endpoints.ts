import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** One method of an official SDK controller with the request it sends. */
export interface SdkEndpoint {
  /** `CustomersController.readCustomerByReference`. */
  readonly name: string;
  readonly method: string;
  /** The path with each path parameter as `{name}`: `/customers/{id}.json`. */
  readonly template: string;
}

/** The SDK's controller sources (`src/controllers/*.ts` of the installed package). */
function controllersDir(): string {
  const require = createRequire(import.meta.url);
  const entry = require.resolve('@maxio-com/advanced-billing-sdk');
  // The package's main file is under `dist/cjs`; its sources sit beside `dist`.
  let dir = dirname(entry);
  while (!readdirSync(dir).includes('src')) dir = dirname(dir);
  return join(dir, 'src', 'controllers');
}

/**
 * Every method of every SDK controller, read from the controller sources: each method's
 * `createRequest('METHOD', '/path')`, or `createRequest('METHOD')` followed by
 * `appendTemplatePath\`/path/${mapped.param}\``.
 */
export function sdkEndpoints(): SdkEndpoint[] {
  const dir = controllersDir();
  const endpoints: SdkEndpoint[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('Controller.ts') || file === 'baseController.ts') continue;
    const source = readFileSync(join(dir, file), 'utf8');
    const controller = /export class (\w+)/.exec(source)?.[1];
    if (controller === undefined) throw new Error(`no controller class in ${file}`);
    const starts = [...source.matchAll(/^ {2}async (\w+)\(/gm)];
    starts.forEach((start, index) => {
      const body = source.slice(start.index, starts[index + 1]?.index ?? source.length);
      const request = /createRequest\(\s*'(\w+)'(?:,\s*'([^']+)')?\s*\)/.exec(body);
      if (request === null) throw new Error(`${controller}.${start[1]}: no createRequest`);
      const templated = /appendTemplatePath`([^`]+)`/.exec(body)?.[1];
      const path = request[2] ?? templated;
      if (path === undefined) throw new Error(`${controller}.${start[1]}: no path`);
      endpoints.push({
        name: `${controller}.${start[1]}`,
        method: request[1]!,
        template: path.replace(/\$\{mapped\.(\w+)\}/g, '{$1}'),
      });
    });
  }
  return endpoints;
}
