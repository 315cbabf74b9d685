/**
 * Statements built and compiled once per dialect, then run with new values (issue 18). Kysely
 * builds an operation tree and compiles it to SQL on every call; for the few statements a renewal
 * runs many times that work is a fifth of the CPU a statement costs on SQLite. A statement made
 * here is built once with placeholder arguments, compiled, and from then on only its parameter
 * list is filled in: the SQL text, and so the SQLite statement cache and the Postgres prepared
 * statement it maps to, is the very same string every time.
 *
 * The builder must use its arguments as values only (in `where`, `set`, `values`): never to choose
 * the statement's shape, and never transformed (encode them before the call). The first compile
 * checks that every argument became exactly one or more parameters, so a builder that breaks the
 * rule fails on its first use, in any test that reaches it.
 */
import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';
import type { Database } from './schema.js';

const SLOT = Symbol('compiled-once argument');

interface Slot {
  readonly [SLOT]: number;
}

function isSlot(value: unknown): value is Slot {
  return typeof value === 'object' && value !== null && SLOT in value;
}

/** Where each parameter of the compiled statement comes from: an argument's index, or a constant the builder wrote. */
type Source = number | { readonly constant: unknown };

interface Template {
  readonly compiled: CompiledQuery<unknown>;
  readonly sources: readonly Source[];
}

/** A statement compiled once per dialect; `run` executes it on the transaction's connection. */
export interface CompiledOnce<Args extends readonly unknown[], Row> {
  run(
    context: { readonly db: Kysely<Database>; readonly hooks: { readonly name: string } },
    ...args: Args
  ): Promise<QueryResult<Row>>;
}

/**
 * Makes a statement compiled once per dialect from `build`, whose arguments after `db` are the
 * statement's values: `arity` of them (default `build.length - 1`; give it for a rest parameter).
 */
export function compiledOnce<Args extends readonly unknown[], Row>(
  build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>,
  arity: number = build.length - 1,
): CompiledOnce<Args, Row> {
  const templates = new Map<string, Template>();

  const templateFor = (db: Kysely<Database>, dialect: string): Template => {
    const known = templates.get(dialect);
    if (known !== undefined) return known;
    const slots = Array.from({ length: arity }, (_, index): Slot => ({ [SLOT]: index }));
    const compiled = build(db, ...(slots as unknown as Args)).compile() as CompiledQuery<unknown>;
    const used = new Set<number>();
    const sources = compiled.parameters.map((parameter): Source => {
      if (!isSlot(parameter)) return { constant: parameter };
      used.add(parameter[SLOT]);
      return parameter[SLOT];
    });
    if (used.size !== arity) {
      throw new Error(
        `compiledOnce: ${arity - used.size} of the ${arity} arguments did not become parameters of ${JSON.stringify(compiled.sql)}; a builder must use its arguments as values only.`,
      );
    }
    const template = { compiled, sources };
    templates.set(dialect, template);
    return template;
  };

  return {
    run({ db, hooks }, ...args) {
      if (args.length !== arity) {
        throw new Error(
          `compiledOnce: this statement expects ${arity} arguments, not ${args.length} (give the arity of a rest parameter).`,
        );
      }
      const { compiled, sources } = templateFor(db, hooks.name);
      const parameters = sources.map((source) => (typeof source === 'number' ? args[source] : source.constant));
      return db.executeQuery<Row>({ ...compiled, parameters } as CompiledQuery<Row>);
    },
  };
}
