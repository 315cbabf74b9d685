/** API keys and direct-post credentials on SQL; only hashes of the secrets that are compared are stored. */
import type { ApiKeyRecord, CredentialsRepository, DirectCredentialRecord } from 'billing-engine';
import type { Selectable } from 'kysely';
import { decodeId, decodeInstant, decodeNullableInstant } from '../codecs.js';
import type { ApiKeysTable, DirectCredentialsTable } from '../schema.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the credentials repository of one transaction. */
export function createCredentialsRepository({ db, encode }: RepositoryContext): CredentialsRepository {
  return {
    async insertApiKey(key) {
      const row = await db
        .insertInto('api_keys')
        .values({
          site_id: key.siteId,
          name: key.name,
          prefix: key.prefix,
          secret_hash: key.secretHash,
          created_at: encode.instant(key.createdAt),
          revoked_at: encode.nullableInstant(key.revokedAt),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeApiKey(row);
    },

    async activeApiKeys(siteId) {
      const rows = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('revoked_at', 'is', null)
        .orderBy('id')
        .execute();
      return rows.map(decodeApiKey);
    },

    async revokeApiKey(siteId, keyId, at) {
      const result = await db
        .updateTable('api_keys')
        .set({ revoked_at: encode.instant(at) })
        .where('site_id', '=', siteId)
        .where('id', '=', keyId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async insertDirect(credential) {
      const row = await db
        .insertInto('direct_credentials')
        .values({
          site_id: credential.siteId,
          api_id: credential.apiId,
          api_secret: credential.apiSecret,
          api_password_hash: credential.apiPasswordHash,
          default_redirect_uri: credential.defaultRedirectUri,
          created_at: encode.instant(credential.createdAt),
          revoked_at: encode.nullableInstant(credential.revokedAt),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeDirect(row);
    },

    async findDirectByApiId(apiId) {
      // The one cross-site lookup: a direct post names only its api_id. api_ids are random, so at
      // most one active row matches; the order makes the answer deterministic all the same.
      const row = await db
        .selectFrom('direct_credentials')
        .selectAll()
        .where('api_id', '=', apiId)
        .where('revoked_at', 'is', null)
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      return row && decodeDirect(row);
    },

    async activeDirect(siteId) {
      const rows = await db
        .selectFrom('direct_credentials')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('revoked_at', 'is', null)
        .orderBy('id')
        .execute();
      return rows.map(decodeDirect);
    },

    async revokeDirect(siteId, at) {
      const result = await db
        .updateTable('direct_credentials')
        .set({ revoked_at: encode.instant(at) })
        .where('site_id', '=', siteId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

function decodeApiKey(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    name: row.name,
    prefix: row.prefix,
    secretHash: row.secret_hash,
    createdAt: decodeInstant(row.created_at),
    revokedAt: decodeNullableInstant(row.revoked_at),
  };
}

function decodeDirect(row: Selectable<DirectCredentialsTable>): DirectCredentialRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    apiId: row.api_id,
    apiSecret: row.api_secret,
    apiPasswordHash: row.api_password_hash,
    defaultRedirectUri: row.default_redirect_uri,
    createdAt: decodeInstant(row.created_at),
    revokedAt: decodeNullableInstant(row.revoked_at),
  };
}
