/** The shape of one numbered, forward-only schema migration. */
import type { Kysely } from 'kysely';
import type { SqlDialectName } from '../codecs.js';

/**
 * One schema change. `id`s are positive integers, strictly increasing in `MIGRATIONS`; an applied
 * migration is never edited, a change ships as a new one. `up` runs inside the migration
 * transaction (both dialects have transactional DDL), with `dialect` to pick column types.
 */
export interface Migration {
  readonly id: number;
  readonly name: string;
  up(db: Kysely<unknown>, dialect: SqlDialectName): Promise<void>;
}
