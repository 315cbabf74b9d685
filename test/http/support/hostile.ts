/**
 * Malformed requests for the route-walking fuzz tests: hostile values (wrong types, huge and
 * unicode strings, negative and fractional cents, number spellings, bad dates), and mutations of a
 * well-formed request (a path parameter, fields inside the wrapper, the wrapper itself, the JSON
 * text, form encodings, content types, the query string). A mutation is generated without knowing
 * the route and applied to any route's template, so one generated run can hit a whole route family.
 */
import fc from 'fast-check';

/** 100 KB strings: ASCII, two-byte, four-byte characters and digits. */
export const HUGE_STRINGS: readonly string[] = [
  'x'.repeat(100_000),
  'é'.repeat(50_000),
  '🦄'.repeat(25_000),
  '9'.repeat(100_000),
];

/** Scalars that break parsers and money and date rules. */
export const NASTY_SCALARS: readonly unknown[] = [
  // amounts: negative, fractional, spelled as other number syntaxes
  -1,
  -100,
  0,
  0.5,
  -0.01,
  1.005,
  1e21,
  2 ** 53,
  -(2 ** 53),
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  '-1',
  '-0.01',
  '0.001',
  '1.005',
  '1e3',
  '1E-3',
  'NaN',
  'Infinity',
  '-Infinity',
  '0x10',
  '0b11',
  '0o7',
  '1_000',
  '1,000.00',
  '$5',
  '5-',
  ' 5 ',
  '+5',
  '−5',
  '١٢٣',
  '１２',
  '9'.repeat(30),
  '-0',
  // dates
  '2026-02-30',
  '2026-13-01',
  '0000-00-00',
  '2026-01-01T25:00:00Z',
  '2026-01-15T12:00:00+25:00',
  '9999-12-31T23:59:59Z',
  '+275760-09-13T00:00:00Z',
  '1969-12-31',
  '1900-01-01',
  'yesterday',
  '2026/02/01',
  '01/02/2026',
  '2026-02-01T00:00:00',
  // types and texts
  '',
  ' ',
  '\u0000',
  'null',
  'undefined',
  'true',
  'false',
  true,
  false,
  null,
  [],
  {},
  [1, 2],
  { a: 1 },
  [{}],
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '../../etc/passwd',
  '%00',
  '%zz',
  '\uD800',
  // invalid text at the wire boundary (security-edge.test.ts): NUL and lone surrogates inside text
  'a\u0000b',
  '\uDC00',
  'x\uD800y',
  '\uDBFF\u0000',
  // numbers past what a double or a safe integer holds
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  1e308,
  -1e308,
  5e-324,
  -0,
  '\u202Eevil',
  'Ω≈ç√∫',
  'İstanbul',
  '\r\nX-Injected: 1',
  'a'.repeat(300),
  '__proto__',
  'constructor',
];

/** One hostile JSON value. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY_SCALARS), weight: 8 },
  { arbitrary: fc.constantFrom(...HUGE_STRINGS), weight: 1 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }), weight: 1 },
  { arbitrary: fc.oneof(fc.integer(), fc.double(), fc.maxSafeInteger()), weight: 2 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 2 },
);

/**
 * JSON number literals that `JSON.stringify` cannot write (it prints `-0` as `0`): beyond 2^53, past
 * the largest double, below the smallest, and exponent spellings. Spliced into a body's text as the
 * value of a field by the `number-literal` break.
 */
export const NUMBER_LITERALS: readonly string[] = [
  '-0',
  '-0.0',
  '9007199254740993',
  '-9007199254740993',
  '123456789012345678901234567890',
  '1e308',
  '1e309',
  '-1e309',
  '1e-400',
  '1E+2',
  '1e2',
  '0.1e1',
  '4.9e-324',
  `1${'0'.repeat(400)}`,
];

/** Keys that carry invalid text (NUL, lone surrogates), for the unknown fields of a body. */
export const HOSTILE_KEYS: readonly string[] = ['\u0000', 'a\u0000', '\uD800', 'k\uDFFF'];

/**
 * Path segments that cannot name a record: never a `/`, never a bare small id of some other record,
 * and never a dot segment (`..`, `%2e%2e`), which URL parsing resolves before routing, so that the
 * request would address another route (a hosted page's catch-all) rather than fuzz this one.
 */
export const HOSTILE_SEGMENTS: readonly string[] = [
  '0',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  'NaN',
  'Infinity',
  'null',
  '%zz',
  '%',
  '%00',
  'a%00b',
  '1%00',
  '%ED%A0%80',
  '%C0%80',
  '%E2%80%AE',
  encodeURIComponent('é'),
  encodeURIComponent('🦄'),
  '9'.repeat(40),
  '9007199254740993',
  'handle:',
  'handle:%zz',
  `handle:${'h'.repeat(3000)}`,
  'abc',
  '[]',
  "'",
  `${'x'.repeat(5000)}`,
];

/** One field edit inside the wrapper: which leaf (modulo the template's leaves) and what happens to it. */
export interface FieldEdit {
  readonly pick: number;
  readonly op: 'set' | 'delete';
  readonly value: unknown;
}

/** Ways to break a JSON text. */
export type JsonBreak =
  | 'truncate'
  | 'garbage'
  | 'double-bom'
  | 'single-quotes'
  | 'nan-literal'
  | 'bad-utf8'
  | 'trailing-comma'
  | 'deep-nesting'
  | 'proto-key'
  | 'duplicate-wrapper'
  | 'bom'
  | 'utf16'
  | 'too-deep'
  | 'deep-at-limit'
  | 'number-literal'
  | 'nul-escape'
  | 'surrogate-escape';

/** Ways to break a form encoding. */
export const FORM_BREAKS: readonly string[] = [
  '%zz',
  '%',
  '%E0%A4%A',
  'a[b=1',
  'a]]=1',
  'a[][][=',
  '[]=1',
  '=1',
  '&&&',
  '===',
  'a[b][c][d][e][f][g][h][i][j][k]=1',
  'a[__proto__][x]=1',
  'a[]=1&a[x]=2',
  '+%2B+',
];

/** Content types a client may send: JSON ones the API takes, and others it must refuse (415) for a body. */
export const CONTENT_TYPES: readonly (string | null)[] = [
  'application/json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/json; charset=iso-8859-1',
  'application/json; charset=utf-16',
  'Application/JSON; Charset="UTF-8"',
  'multipart/form-data; boundary=x',
  'application/vnd.api+json',
  'application/jsonx',
  'text/json',
  'x/y;;;',
  '',
  null,
];

/** A mutation of a well-formed request, independent of the route it is applied to. */
export type Mutation =
  | { readonly kind: 'valid' }
  | { readonly kind: 'path'; readonly pick: number; readonly segment: string }
  | {
      readonly kind: 'fields';
      readonly edits: readonly FieldEdit[];
      readonly extra: Readonly<Record<string, unknown>>;
      readonly topExtra: Readonly<Record<string, unknown>>;
    }
  | {
      readonly kind: 'wrapper';
      readonly shape: 'missing' | 'unwrapped' | 'scalar' | 'array' | 'renamed' | 'top-scalar' | 'empty-body';
      readonly value: unknown;
    }
  | { readonly kind: 'json-text'; readonly broken: JsonBreak; readonly at: number; readonly garbage: string }
  | { readonly kind: 'form'; readonly contentType: string | null; readonly breakage: string; readonly at: number }
  | { readonly kind: 'content-type'; readonly contentType: string | null }
  | {
      readonly kind: 'query';
      readonly edits: readonly FieldEdit[];
      readonly raw: string;
    };

const fieldEdit: fc.Arbitrary<FieldEdit> = fc.record({
  pick: fc.nat(),
  op: fc.constantFrom<'set' | 'delete'>('set', 'set', 'set', 'delete'),
  value: hostileValue,
});

const unknownFields = fc.dictionary(
  fc.oneof(
    fc.constantFrom('uniqueness_token', 'id', 'site_id', 'state', '__proto__', 'constructor', 'x-unknown', ''),
    fc.constantFrom(...HOSTILE_KEYS),
    fc.string({ maxLength: 12 }),
  ),
  hostileValue,
  { maxKeys: 3 },
);

/** Any mutation; `valid` is rare, so that nearly every request is malformed. */
export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.constant<Mutation>({ kind: 'valid' }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('path' as const),
      pick: fc.nat(),
      segment: fc.constantFrom(...HOSTILE_SEGMENTS),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('fields' as const),
      edits: fc.array(fieldEdit, { minLength: 1, maxLength: 4 }),
      extra: unknownFields,
      topExtra: unknownFields,
    }),
    weight: 8,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('wrapper' as const),
      shape: fc.constantFrom<'missing' | 'unwrapped' | 'scalar' | 'array' | 'renamed' | 'top-scalar' | 'empty-body'>(
        'missing',
        'unwrapped',
        'scalar',
        'array',
        'renamed',
        'top-scalar',
        'empty-body',
      ),
      value: hostileValue,
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('json-text' as const),
      broken: fc.constantFrom<JsonBreak>(
        'truncate',
        'garbage',
        'double-bom',
        'single-quotes',
        'nan-literal',
        'bad-utf8',
        'trailing-comma',
        'deep-nesting',
        'proto-key',
        'duplicate-wrapper',
        'bom',
        'utf16',
        'too-deep',
        'deep-at-limit',
        'number-literal',
        'nul-escape',
        'surrogate-escape',
      ),
      at: fc.nat(),
      garbage: fc.oneof(fc.constantFrom('}', ']', 'x', '\u0000', ',', '{}', 'null', '"'), fc.string({ maxLength: 8 })),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('form' as const),
      contentType: fc.constantFrom<string | null>('application/x-www-form-urlencoded', 'application/json', null),
      breakage: fc.constantFrom(...FORM_BREAKS),
      at: fc.nat(),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('content-type' as const),
      contentType: fc.constantFrom(...CONTENT_TYPES),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('query' as const),
      edits: fc.array(fieldEdit, { minLength: 1, maxLength: 3 }),
      raw: fc.constantFrom(
        ...FORM_BREAKS,
        '',
        'page=-1&per_page=1e3',
        'page[]=1',
        'direction=sideways',
        'code=a%00b',
        '%00=1',
        'q=%ED%A0%80',
      ),
    }),
    weight: 2,
  },
);

/** A leaf of a JSON value: where it is (keys and indexes). */
type Leaf = readonly (string | number)[];

/** Every leaf path of a JSON value (objects and arrays walked; an empty one is a leaf itself). */
export function leaves(value: unknown, at: Leaf = []): Leaf[] {
  if (Array.isArray(value)) {
    if (value.length === 0) return [at];
    return value.flatMap((item, i) => leaves(item, [...at, i]));
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return [at];
    return entries.flatMap(([key, item]) => leaves(item, [...at, key]));
  }
  return [at];
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** A copy of `root` with the leaf at `path` set to `value` (or removed). */
export function editAt(root: unknown, path: Leaf, op: 'set' | 'delete', value: unknown): unknown {
  if (path.length === 0) return op === 'delete' ? undefined : value;
  const copy = clone(root) as Record<string | number, unknown>;
  let node: Record<string | number, unknown> = copy;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (op === 'delete') {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else {
    node[last] = value;
  }
  return copy;
}

/** Applies field edits to the leaves of `value`. */
export function applyEdits(value: unknown, edits: readonly FieldEdit[]): unknown {
  let current = value;
  for (const edit of edits) {
    const all = leaves(current);
    const path = all[edit.pick % Math.max(1, all.length)] ?? [];
    current = editAt(current, path, edit.op, edit.value);
  }
  return current;
}

/** Breaks a JSON text. */
export function breakJson(text: string, broken: JsonBreak, at: number, garbage: string): string | Buffer {
  switch (broken) {
    case 'truncate':
      return text.length <= 1 ? '{' : text.slice(0, 1 + (at % (text.length - 1)));
    case 'garbage':
      return `${text}${garbage === '' ? 'x' : garbage}`;
    case 'double-bom':
      return `\uFEFF\uFEFF${text}`;
    case 'bom':
      return `\uFEFF${text}`;
    case 'single-quotes':
      return text.includes('"') ? text.replaceAll('"', "'") : `{'a':${text}}`;
    case 'nan-literal':
      return text.replace(/:(\s*)("[^"]*"|-?\d[\d.eE+-]*|true|false|null)/, ':$1NaN') || '{"a":NaN}';
    case 'bad-utf8':
      return Buffer.concat([Buffer.from(text.slice(0, at % (text.length + 1))), Buffer.from([0xff, 0xfe, 0xc3])]);
    case 'trailing-comma':
      return text.replace(/}$/, ',}');
    case 'deep-nesting':
      return `{"a":${'['.repeat(5000)}${']'.repeat(5000)},"b":${'{"c":'.repeat(3000)}1${'}'.repeat(3000)}}`;
    case 'proto-key':
      return `{"__proto__":${text},"constructor":{"prototype":{"polluted":true}}}`;
    case 'duplicate-wrapper':
      return text.startsWith('{') && text.length > 2
        ? `${text.slice(0, -1)},${text.slice(1, text.indexOf(':') + 1)}"duplicate"}`
        : text;
    case 'utf16':
      return Buffer.from(text, 'utf16le');
    case 'too-deep':
      // One level past the limit (32), inside the wrapper: refused before parsing.
      return wrapInside(text, `${'['.repeat(33)}${']'.repeat(33)}`);
    case 'deep-at-limit':
      // Exactly at the limit with the wrapper counted: read, then judged by the route's own rules.
      return wrapInside(text, `${'['.repeat(30)}${']'.repeat(30)}`);
    case 'number-literal':
      return replaceValue(text, at, NUMBER_LITERALS[at % NUMBER_LITERALS.length] ?? '-0');
    case 'nul-escape':
      return replaceValue(text, at, '"a\\u0000b"');
    case 'surrogate-escape':
      return replaceValue(text, at, at % 2 === 0 ? '"\\ud800"' : '"x\\udc00"');
  }
}

/** A JSON text with `{"deep": value}` added at its first object's top (or the value alone for another text). */
function wrapInside(text: string, value: string): string {
  const inner = text.indexOf('{', 1);
  if (!text.startsWith('{')) return value;
  // Into the wrapper object when there is one, so that the nesting counts from inside it.
  const at = inner === -1 ? 1 : inner + 1;
  const rest = text.slice(at);
  return `${text.slice(0, at)}"deep":${value}${rest.startsWith('}') ? '' : ','}${rest}`;
}

/** A JSON text with the `at`-th scalar value (modulo their number) replaced by the raw literal `literal`. */
function replaceValue(text: string, at: number, literal: string): string {
  const values = [...text.matchAll(/:(\s*)("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null)/g)];
  const match = values[at % Math.max(1, values.length)];
  if (match?.index === undefined) return `{"value":${literal}}`;
  const start = match.index + 1 + (match[1]?.length ?? 0);
  return `${text.slice(0, start)}${literal}${text.slice(start + (match[2]?.length ?? 0))}`;
}

/** Form pairs of a JSON value in bracket notation (`a[b][0]=c`). */
export function formPairs(value: unknown, prefix = ''): [string, string][] {
  if (Array.isArray(value)) return value.flatMap((item) => formPairs(item, `${prefix}[]`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => formPairs(item, prefix === '' ? key : `${prefix}[${key}]`));
  }
  return [[prefix, value === null || value === undefined ? '' : String(JSON.stringify(value)).replace(/^"|"$/g, '')]];
}

// A lone surrogate has no UTF-8 form, so a URL or form cannot carry one: it goes as U+FFFD, as a browser sends it.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `encodeURIComponent` that never throws: a lone surrogate is sent as U+FFFD. */
export function encodeText(text: string): string {
  return encodeURIComponent(text.replace(LONE_SURROGATE, '\uFFFD'));
}

/** A form body of `pairs` with `breakage` spliced in at a pair boundary. */
export function brokenForm(pairs: readonly (readonly [string, string])[], breakage: string, at: number): string {
  const parts = pairs.map(([k, v]) => `${encodeText(k)}=${encodeText(v)}`);
  parts.splice(at % (parts.length + 1), 0, breakage);
  return parts.join('&');
}

/** Stringifies a JSON value that may hold values `JSON.stringify` drops, so the body is always a string. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/**
 * Values of the wire-boundary shapes (security-edge.test.ts): text with a NUL or a lone surrogate,
 * and numbers past a safe integer or a double's range.
 */
export const EDGE_VALUES: readonly unknown[] = [
  '\u0000',
  'a\u0000b',
  '\uD800',
  '\uDC00',
  'x\uD800y',
  '\uDBFF\u0000',
  { nested: 'in\u0000side' },
  ['\uD800'],
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  1e308,
  -1e308,
  5e-324,
  Number.MAX_VALUE,
  -0,
];

const edgeEdit: fc.Arbitrary<FieldEdit> = fc.record({
  pick: fc.nat(),
  op: fc.constant<'set' | 'delete'>('set'),
  value: fc.constantFrom(...EDGE_VALUES),
});

/**
 * Mutations made only of the wire-boundary shapes: invalid text in fields, keys, the path and the
 * query; nesting past (and at) the depth limit; number literals JSON.stringify cannot write; and
 * content types the API refuses for a body. Used for the smaller Postgres fuzz run, where a NUL
 * was a 500 (fuzz-postgres-hostile.test.ts).
 */
export const edgeMutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('fields' as const),
      edits: fc.array(edgeEdit, { minLength: 1, maxLength: 2 }),
      extra: fc.dictionary(fc.constantFrom(...HOSTILE_KEYS, 'memo'), fc.constantFrom(...EDGE_VALUES), { maxKeys: 1 }),
      topExtra: fc.constant({}),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('json-text' as const),
      broken: fc.constantFrom<JsonBreak>(
        'deep-nesting',
        'too-deep',
        'deep-at-limit',
        'number-literal',
        'number-literal',
        'nul-escape',
        'surrogate-escape',
      ),
      at: fc.nat(),
      garbage: fc.constant(''),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('content-type' as const),
      contentType: fc.constantFrom(...CONTENT_TYPES),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('path' as const),
      pick: fc.nat(),
      segment: fc.constantFrom('%00', 'a%00b', '1%00', '%ED%A0%80', '%C0%80'),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('query' as const),
      edits: fc.array(edgeEdit, { minLength: 1, maxLength: 2 }),
      raw: fc.constantFrom('code=a%00b', '%00=1', 'q=%ED%A0%80', ''),
    }),
    weight: 2,
  },
);
