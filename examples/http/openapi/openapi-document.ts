/**
 * The OpenAPI 3.1 document of an app, made from the app's own route table (Hono's `app.routes`):
 * every route it serves becomes an operation, so a route added later is documented without an edit
 * here. Routes named in `KNOWN_OPERATIONS` get their summary, request body (the wire layer's zod
 * schemas, rendered by zod-openapi) and success body; any other route still gets its path
 * parameters, a generic body and the standard error answers.
 */
import { createDocument, type oas31, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import {
  wireBoolean,
  wireCardExpiry,
  wireCardNumber,
  wireCents,
  wireDecimal,
  wireId,
  wireIdOrHandle,
  wireInteger,
  wireIntervalUnit,
  wireSnapDay,
  wireText,
  wireTimestampInput,
} from '../wire-bridge.js';
import { accessDeniedSchema, errorBodySchema } from './response-schemas.js';
import { KNOWN_OPERATIONS, type OperationInfo } from './route-metadata.js';

/** One entry of Hono's route table: the method as registered and the path pattern. */
export interface RouteEntry {
  readonly method: string;
  readonly path: string;
}

/** A path parameter of an operation. */
export interface PathParameter {
  readonly name: string;
  /** The pattern the router holds the value to, when the route gives one other than "one segment". */
  readonly pattern?: string;
}

/** One operation the app serves: the OpenAPI method and path, and the path's parameters. */
export interface ServedOperation {
  /** Lower case, as OpenAPI keys operations: `get`, `post`, ... */
  readonly method: string;
  /** In OpenAPI spelling: `/subscriptions/{id}.json`. */
  readonly path: string;
  readonly parameters: readonly PathParameter[];
}

// Hono's `:name`, `:name?` and `:name{regex}` (a regex may hold one level of braces, `{2,4}`).
const PARAMETER = /:(\w+)(?:\{((?:[^{}]|\{[^{}]*\})*)\})?\??/g;
// How the routes spell a last segment that must end in `.json` (`JSON_SEGMENT` in http-context.ts).
const JSON_SEGMENT_REGEX = '[^/]+\\.json';
const EVERY_METHOD = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * A Hono path pattern in OpenAPI spelling, with its parameters: `:id{[^/]+\.json}` becomes
 * `{id}.json` (the `.json` suffix as the service spells paths), any other `:name{regex}` becomes
 * `{name}` held to the regex, and a trailing `*` becomes a `{path}` parameter.
 */
export function openApiPath(pattern: string): { path: string; parameters: PathParameter[] } {
  const parameters: PathParameter[] = [];
  let path = pattern.replaceAll(PARAMETER, (_match, name: string, regex: string | undefined) => {
    if (regex === JSON_SEGMENT_REGEX) {
      parameters.push({ name });
      return `{${name}}.json`;
    }
    parameters.push(regex === undefined ? { name } : { name, pattern: `^(?:${regex})$` });
    return `{${name}}`;
  });
  if (path.endsWith('/*')) {
    parameters.push({ name: 'path' });
    path = `${path.slice(0, -1)}{path}`;
  }
  return { path, parameters };
}

/**
 * The operations of a route table, once each. An `ALL` route whose path ends in `*` is a
 * middleware (`app.use`: authentication, limits), which answers nothing on its own, so it is left
 * out; an `ALL` route on a plain path answers every method, so it is listed under each. A route
 * registered with several handlers appears once.
 */
export function servedOperations(routes: readonly RouteEntry[]): ServedOperation[] {
  const operations = new Map<string, ServedOperation>();
  for (const route of routes) {
    const isMiddleware = route.method === 'ALL' && route.path.endsWith('*');
    if (isMiddleware) continue;
    const { path, parameters } = openApiPath(route.path);
    const methods = route.method === 'ALL' ? EVERY_METHOD : [route.method.toLowerCase()];
    for (const method of methods) {
      const key = `${method} ${path}`;
      if (!operations.has(key)) operations.set(key, { method, path, parameters });
    }
  }
  return [...operations.values()];
}

// The routes that answer without an API key: the usage page, health and metrics, this document and
// its page, the direct-post API (it authenticates by signature) and the hosted pages (by a token in
// the path). `/portal/customers/...` is the key-protected API that makes portal links.
const PUBLIC_PATHS: readonly RegExp[] = [
  /^\/$/,
  /^\/(healthz|readyz|metrics)$/,
  /^\/openapi\.json$/,
  /^\/docs(\/.*)?$/,
  /^\/api\/v2\//,
  /^\/update_payment\//,
  /^\/portal\/(?!customers\/)/,
];

/** Whether an operation's path (OpenAPI spelling) is served without an API key. */
export function isPublicPath(path: string): boolean {
  return PUBLIC_PATHS.some((pattern) => pattern.test(path));
}

/**
 * JSON Schemas of the wire layer's scalar readers. Each is a `z.unknown()` with a transform, so
 * zod-openapi alone would render it as "any"; these say which JSON values it takes. Looked up by
 * identity, so the wire files stay as they are.
 */
const WIRE_SCALARS = new Map<unknown, oas31.SchemaObject>([
  [wireText, { type: ['string', 'number'], description: 'Text; a number is read as its digits.' }],
  [
    wireId,
    {
      anyOf: [
        { type: 'integer', minimum: 1 },
        { type: 'string', pattern: '^\\s*\\d+\\s*$' },
      ],
    },
  ],
  [wireInteger, { anyOf: [{ type: 'integer' }, { type: 'string', pattern: '^\\s*-?\\d+\\s*$' }] }],
  [wireCents, { type: ['integer', 'string'], description: 'Integer minor units (cents), as a number or a string.' }],
  [
    wireBoolean,
    {
      anyOf: [{ type: 'boolean' }, { enum: [0, 1] }, { type: 'string', description: '"true", "false", "1" or "0".' }],
    },
  ],
  [wireCardNumber, { type: ['string', 'integer'], description: 'The full card number; never stored or echoed.' }],
  [wireCardExpiry, { type: ['integer', 'string'] }],
  [wireTimestampInput, { type: 'string', description: "An ISO 8601 timestamp or date, in the site's time zone." }],
  [wireIntervalUnit, { type: 'string', enum: ['month', 'day', 'months', 'days'] }],
  [wireDecimal, { type: ['number', 'string'], description: 'A decimal in major units; a string keeps every digit.' }],
  [
    wireIdOrHandle,
    {
      anyOf: [
        { type: 'integer', minimum: 1 },
        { type: 'string', minLength: 1 },
      ],
    },
  ],
  [
    wireSnapDay,
    {
      anyOf: [
        { type: 'integer', minimum: 1, maximum: 28 },
        { type: 'string', enum: ['end'] },
      ],
    },
  ],
]);

/** The answers every operation may give besides its success, by status; hosted pages answer them as pages. */
function errorResponses(method: string, isPublic: boolean, html: boolean): ZodOpenApiOperationObject['responses'] {
  const writes = method !== 'get' && method !== 'delete';
  const JSON_ERROR = (description: string) => ({
    description,
    content: html
      ? { 'text/html': { schema: { type: 'string' as const } } }
      : { 'application/json': { schema: errorBodySchema } },
  });
  return {
    ...(writes
      ? {
          '400': JSON_ERROR('The body is not valid JSON.'),
          '413': JSON_ERROR('The body is larger than the limit.'),
          '415': JSON_ERROR('A write whose body is not typed as JSON.'),
        }
      : {}),
    ...(isPublic
      ? {}
      : {
          '401': {
            description: 'A missing or wrong API key, or a Host that names no site.',
            content: { 'text/plain': { schema: accessDeniedSchema } },
          },
        }),
    '404': JSON_ERROR('No such record, or no such route.'),
    '422': JSON_ERROR('The request was read but refused; the messages say why.'),
    '429': JSON_ERROR('Too many requests; retry after the Retry-After header.'),
    '500': JSON_ERROR('An unexpected failure; the details stay in the server log.'),
  };
}

/** A stable, unique name for an operation: its method and path as an identifier. */
function operationId(method: string, path: string): string {
  const words = path
    .replaceAll(/[{}]/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [method, ...words].join('_');
}

/** The group of an operation with no known tag: its first path segment, e.g. `Invoices`. */
function defaultTag(path: string): string {
  const first = path.split('/').find((segment) => segment !== '' && !segment.startsWith('{')) ?? 'service';
  const words = first.replace(/\.json$/, '').replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function operationObject(operation: ServedOperation, info: OperationInfo | undefined): ZodOpenApiOperationObject {
  const { method, path } = operation;
  const isPublic = isPublicPath(path);
  const writes = method === 'post' || method === 'put' || method === 'patch';
  const success = info?.success;
  const successStatus = success === undefined ? '2XX' : String(success.status);
  const successContent =
    success?.schema === undefined && success?.contentType === undefined
      ? { 'application/json': { schema: {} } }
      : { [success?.contentType ?? 'application/json']: { schema: success?.schema ?? {} } };
  return {
    operationId: operationId(method, path),
    summary: info?.summary ?? `${method.toUpperCase()} ${path}`,
    ...(info?.description === undefined ? {} : { description: info.description }),
    tags: [info?.tag ?? defaultTag(path)],
    ...(isPublic ? { security: [] } : {}),
    ...(operation.parameters.length === 0
      ? {}
      : {
          parameters: operation.parameters.map(
            (parameter): oas31.ParameterObject => ({
              name: parameter.name,
              in: 'path',
              required: true,
              schema:
                parameter.pattern === undefined ? { type: 'string' } : { type: 'string', pattern: parameter.pattern },
            }),
          ),
        }),
    ...(info?.requestBody !== undefined
      ? {
          requestBody: {
            required: info.bodyOptional !== true,
            content: Object.fromEntries(
              (info.bodyTypes ?? ['application/json']).map((type) => [type, { schema: info.requestBody }]),
            ),
          },
        }
      : writes && info === undefined
        ? {
            requestBody: {
              description: 'A JSON object, wrapped in the resource name as every body of the service is.',
              content: { 'application/json': { schema: { type: 'object' } } },
            },
          }
        : {}),
    responses: {
      [successStatus]: {
        description: success?.description ?? 'Success: a JSON body, not described field by field here yet.',
        content: successContent,
      },
      ...errorResponses(method, isPublic, success?.contentType === 'text/html'),
    },
  };
}

/** Options of {@link buildOpenApiDocument}. */
export interface OpenApiDocumentOptions {
  /** `info.version`: the version of this document. Default `1.0.0`. */
  readonly version?: string;
}

/** The OpenAPI document zod-openapi renders. */
export type OpenApiDocument = ReturnType<typeof createDocument>;

/** The OpenAPI 3.1 document of every operation in a route table. */
export function buildOpenApiDocument(
  routes: readonly RouteEntry[],
  options: OpenApiDocumentOptions = {},
): OpenApiDocument {
  const paths: ZodOpenApiPathsObject = {};
  for (const operation of servedOperations(routes)) {
    const info = KNOWN_OPERATIONS[`${operation.method.toUpperCase()} ${operation.path}`];
    const item = (paths[operation.path] ?? {}) as Record<string, ZodOpenApiOperationObject>;
    item[operation.method] = operationObject(operation, info);
    paths[operation.path] = item;
  }
  return createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'billing-engine HTTP API',
        version: options.version ?? '1.0.0',
        description: [
          'A Chargify-compatible billing API.',
          '',
          '- The site is the first label of the Host header: `Host: acme.localhost` is the site `acme`.',
          '- The API key is the HTTP Basic user; the password is ignored (send `x`).',
          '- Bodies are JSON wrapped in the resource name (`{"customer":{...}}`); paths end in `.json`.',
          '- Money is in integer minor units (`*_in_cents`).',
        ].join('\n'),
      },
      servers: [{ url: '/', description: 'This server' }],
      security: [{ apiKey: [] }],
      paths,
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'basic',
            description: 'The API key as the Basic user name; any password.',
          },
        },
      },
    },
    {
      override: ({ zodSchema, jsonSchema }) => {
        const scalar = WIRE_SCALARS.get(zodSchema);
        if (scalar !== undefined) Object.assign(jsonSchema, structuredClone(scalar));
      },
    },
  );
}
