/**
 * `GET /openapi.json` (the document of every route the app serves) and `GET /docs` (a reference
 * page rendering it), both public. The page is Scalar's (`@scalar/hono-api-reference`), whose HTML
 * loads the `@scalar/api-reference` browser bundle. By default that bundle comes from a CDN; here it
 * is served by this app from `node_modules` at `/docs/api-reference.js`, so the page works offline
 * and loads no script from another origin. Where the bundle is not installed, `/docs` is a plain
 * HTML list of the operations instead, with a note saying what to install.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Scalar } from '@scalar/hono-api-reference';
import type { Env, Hono } from 'hono';
import { escapeHtml } from '../wire-bridge.js';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi-document.js';

/** Where `/docs` loads the reference page's script from (same origin). */
export const REFERENCE_SCRIPT_PATH = '/docs/api-reference.js';

/** The browser bundle of `@scalar/api-reference`, as that package ships it. */
const REFERENCE_BUNDLE = '@scalar/api-reference/dist/browser/standalone.js';

/** Options of {@link registerOpenApiRoutes}. */
export interface OpenApiRoutesOptions {
  /**
   * The file of the reference page's script: default the `@scalar/api-reference` bundle found from
   * this module, if installed; `false` for the plain page.
   */
  readonly referenceScriptFile?: string | false;
}

/** The installed Scalar bundle's file, or undefined when the package is not installed. */
export function findReferenceBundle(): string | undefined {
  try {
    // `__filename` in a CommonJS build, the module URL in an ES module.
    const require = createRequire(typeof __filename === 'string' ? __filename : import.meta.url);
    return require.resolve(REFERENCE_BUNDLE);
  } catch {
    return undefined;
  }
}

/** The plain reference page: the operations by group, each with its method, path and summary. */
function plainReferencePage(document: OpenApiDocument): string {
  const groups = new Map<string, string[]>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item ?? {})) {
      if (typeof operation !== 'object' || operation === null || !('responses' in operation)) continue;
      const tag = operation.tags?.[0] ?? 'Other';
      const line = `<li><code>${method.toUpperCase()} ${escapeHtml(path)}</code> ${escapeHtml(operation.summary ?? '')}</li>`;
      groups.set(tag, [...(groups.get(tag) ?? []), line]);
    }
  }
  const sections = [...groups].map(([tag, lines]) => `<h2>${escapeHtml(tag)}</h2>\n<ul>\n${lines.join('\n')}\n</ul>`);
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(document.info.title)}</title></head>
<body>
<h1>${escapeHtml(document.info.title)}</h1>
<p>The full document is at <a href="/openapi.json">/openapi.json</a>. For the interactive reference,
install <code>@scalar/api-reference</code> beside this server; this page then renders it.</p>
${sections.join('\n')}
</body>
</html>`;
}

/**
 * Registers `/openapi.json`, `/docs` and the page's script. Register them before the API key
 * middleware: they are public. The document is made on its first request, from `app.routes` as it
 * is then (every route registered by then, including those after these), and kept for the app's life.
 */
export function registerOpenApiRoutes<E extends Env>(app: Hono<E>, options: OpenApiRoutesOptions = {}): void {
  let document: OpenApiDocument | undefined;
  let documentText: string | undefined;
  const currentDocument = () => {
    document ??= buildOpenApiDocument(app.routes);
    return document;
  };
  const scriptFile = options.referenceScriptFile === undefined ? findReferenceBundle() : options.referenceScriptFile;

  app.get('/openapi.json', () => {
    documentText ??= JSON.stringify(currentDocument());
    return new Response(documentText, { headers: { 'content-type': 'application/json; charset=utf-8' } });
  });

  if (scriptFile === false || scriptFile === undefined) {
    app.get('/docs', (c) => c.html(plainReferencePage(currentDocument())));
  } else {
    app.get(
      '/docs',
      Scalar({
        url: '/openapi.json',
        cdn: REFERENCE_SCRIPT_PATH,
        pageTitle: 'billing-engine API reference',
        // Nothing from another origin: no web fonts, no telemetry.
        withDefaultFonts: false,
        telemetry: false,
      }),
    );
  }

  app.get(REFERENCE_SCRIPT_PATH, async (c) => {
    if (scriptFile === false || scriptFile === undefined) {
      // The service's error shape and content type, as every other 404.
      return c.body(
        JSON.stringify({ errors: ['The reference script is not installed: add @scalar/api-reference.'] }),
        404,
        {
          'content-type': 'application/json; charset=utf-8',
        },
      );
    }
    return new Response(await readFile(scriptFile), {
      headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=3600' },
    });
  });
}
