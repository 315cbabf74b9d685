/** Sites on SQL: the tenant rows. Deleting one removes its data through `ON DELETE CASCADE`. */
import { BillingError, type SitePatch, type SiteRecord, type SiteSettings, type SitesRepository } from 'billing-engine';
import type { Selectable, Updateable } from 'kysely';
import { decodeId, decodeInstant, decodeInteger, decodeJsonObject } from '../codecs.js';
import type { SitesTable } from '../schema.js';
import { ReadCache } from './read-cache.js';
import type { RepositoryContext } from './repository-context.js';

/**
 * Builds the sites repository of one transaction. A site is read by several steps of every
 * command (and a batched transaction runs many commands), so reads by id and subdomain are
 * cached for the transaction; every write here clears the cache (see {@link ReadCache}).
 */
export function createSitesRepository({ db, encode, caches }: RepositoryContext): SitesRepository {
  const cache = new ReadCache<SiteRecord>();
  const remember = (site: SiteRecord | undefined): SiteRecord | undefined => {
    if (site !== undefined) {
      cache.put(`id:${site.id}`, site);
      cache.put(`subdomain:${site.subdomain}`, site);
    }
    return site;
  };
  return {
    async insert(site) {
      cache.clear();
      const row = await db
        .insertInto('sites')
        .values({
          subdomain: site.subdomain,
          name: site.name,
          currency: site.currency,
          time_zone: site.timeZone,
          date_format: site.dateFormat,
          time_format: site.timeFormat,
          mode: site.mode,
          shared_key: site.sharedKey,
          settings: encode.json(site.settings),
          version: 1,
          created_at: encode.instant(site.createdAt),
          updated_at: encode.instant(site.updatedAt),
        })
        // DO NOTHING instead of a failing insert: on Postgres a failed statement would doom the
        // whole transaction, and a taken subdomain is an answer the caller may handle.
        .onConflict((oc) => oc.column('subdomain').doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) {
        throw new BillingError('conflict', `Subdomain ${site.subdomain} is already taken.`, {
          data: { subdomain: site.subdomain },
        });
      }
      return decodeSite(row);
    },

    findById(id) {
      return cache.get(`id:${id}`, async () => {
        const row = await db.selectFrom('sites').selectAll().where('id', '=', id).executeTakeFirst();
        return remember(row && decodeSite(row));
      });
    },

    findBySubdomain(subdomain) {
      return cache.get(`subdomain:${subdomain}`, async () => {
        const row = await db.selectFrom('sites').selectAll().where('subdomain', '=', subdomain).executeTakeFirst();
        return remember(row && decodeSite(row));
      });
    },

    async list() {
      const rows = await db.selectFrom('sites').selectAll().orderBy('id').execute();
      return rows.map(decodeSite);
    },

    async updateAtVersion(id, expectedVersion, patch) {
      cache.clear();
      const row = await db
        .updateTable('sites')
        .set((eb) => ({ ...encodePatch(patch, encode), version: eb('version', '+', 1) }))
        // The version check and the write are one statement: on Postgres concurrent updaters queue
        // on the row lock and re-check the version after the winner commits, so only one matches.
        .where('id', '=', id)
        .where('version', '=', expectedVersion)
        .returningAll()
        .executeTakeFirst();
      return row && decodeSite(row);
    },

    async delete(id) {
      cache.clear();
      caches.clearAll();
      const result = await db.deleteFrom('sites').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

function encodePatch(patch: SitePatch, encode: RepositoryContext['encode']): Updateable<SitesTable> {
  const set: Updateable<SitesTable> = {};
  // Partial<> allows keys present with an undefined value; those mean "unchanged".
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.currency !== undefined) set.currency = patch.currency;
  if (patch.timeZone !== undefined) set.time_zone = patch.timeZone;
  if (patch.dateFormat !== undefined) set.date_format = patch.dateFormat;
  if (patch.timeFormat !== undefined) set.time_format = patch.timeFormat;
  if (patch.mode !== undefined) set.mode = patch.mode;
  if (patch.sharedKey !== undefined) set.shared_key = patch.sharedKey;
  if (patch.settings !== undefined) set.settings = encode.json(patch.settings);
  if (patch.updatedAt !== undefined) set.updated_at = encode.instant(patch.updatedAt);
  return set;
}

function decodeSite(row: Selectable<SitesTable>): SiteRecord {
  return {
    id: decodeId(row.id),
    subdomain: row.subdomain,
    name: row.name,
    currency: row.currency,
    timeZone: row.time_zone,
    dateFormat: row.date_format,
    timeFormat: row.time_format,
    mode: row.mode === 'live' ? 'live' : 'test',
    sharedKey: row.shared_key,
    settings: decodeJsonObject(row.settings) as unknown as SiteSettings,
    version: decodeInteger(row.version),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}
