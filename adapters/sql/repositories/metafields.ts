/** Metafields (custom field definitions) and their values (metadata), on SQL. */
import {
  BillingError,
  type MetadataRecord,
  type MetafieldRecord,
  type MetafieldResource,
  type MetafieldScope,
  type MetafieldsRepository,
} from 'billing-engine';
import type { Selectable, Updateable } from 'kysely';
import { decodeId, decodeInstant, decodeJsonObject, decodeJsonStringArray } from '../codecs.js';
import type { MetadataTable, MetafieldsTable } from '../schema.js';
import { withConstraintConflict } from './constraint-conflict.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the metafields repository of one transaction. */
export function createMetafieldsRepository(context: RepositoryContext): MetafieldsRepository {
  const { db, encode } = context;
  const nameTaken = (name: string) =>
    new BillingError('conflict', `Metafield name ${name} is already taken.`, { data: { name } });

  return {
    async insertField(field) {
      const row = await db
        .insertInto('metafields')
        .values({
          site_id: field.siteId,
          resource_type: field.resourceType,
          name: field.name,
          input_type: field.inputType,
          enum_values: field.enumValues === null ? null : encode.json(field.enumValues),
          scope: encode.json(field.scope),
          created_at: encode.instant(field.createdAt),
          updated_at: encode.instant(field.updatedAt),
        })
        .onConflict((oc) => oc.columns(['site_id', 'resource_type', 'name']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) throw nameTaken(field.name);
      return decodeField(row);
    },

    async findField(siteId, resourceType, name) {
      const row = await db
        .selectFrom('metafields')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('resource_type', '=', resourceType)
        .where('name', '=', name)
        .executeTakeFirst();
      return row && decodeField(row);
    },

    async listFields(siteId, resourceType) {
      const rows = await db
        .selectFrom('metafields')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('resource_type', '=', resourceType)
        .orderBy('id')
        .execute();
      return rows.map(decodeField);
    },

    async updateField(siteId, id, patch) {
      const set: Updateable<MetafieldsTable> = {};
      if (patch.name !== undefined) set.name = patch.name;
      if (patch.inputType !== undefined) set.input_type = patch.inputType;
      if (patch.enumValues !== undefined)
        set.enum_values = patch.enumValues === null ? null : encode.json(patch.enumValues);
      if (patch.scope !== undefined) set.scope = encode.json(patch.scope);
      if (patch.updatedAt !== undefined) set.updated_at = encode.instant(patch.updatedAt);
      const update = () =>
        Object.keys(set).length === 0
          ? db
              .selectFrom('metafields')
              .selectAll()
              .where('site_id', '=', siteId)
              .where('id', '=', id)
              .executeTakeFirst()
          : db
              .updateTable('metafields')
              .set(set)
              .where('site_id', '=', siteId)
              .where('id', '=', id)
              .returningAll()
              .executeTakeFirst();
      const name = patch.name;
      const row =
        name === undefined
          ? await update()
          : await withConstraintConflict(context, 'unique', () => nameTaken(name), update);
      if (row === undefined) return undefined;
      if (name !== undefined) {
        // Values carry their field's name (lists are keyed by it), so a rename renames them too.
        await db
          .updateTable('metadata')
          .set({ name })
          .where('site_id', '=', siteId)
          .where('metafield_id', '=', id)
          .execute();
      }
      return decodeField(row);
    },

    async deleteField(siteId, id) {
      // The values go with it through their ON DELETE CASCADE reference.
      const result = await db
        .deleteFrom('metafields')
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async setValue({ now, ...value }) {
      // One upsert: concurrent writers of one value never create two rows.
      const row = await db
        .insertInto('metadata')
        .values({
          site_id: value.siteId,
          resource_type: value.resourceType,
          resource_id: value.resourceId,
          metafield_id: value.metafieldId,
          name: value.name,
          value: value.value,
          created_at: encode.instant(now),
          updated_at: encode.instant(now),
        })
        .onConflict((oc) =>
          oc.columns(['site_id', 'resource_type', 'resource_id', 'metafield_id']).doUpdateSet((eb) => ({
            name: eb.ref('excluded.name'),
            value: eb.ref('excluded.value'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeValue(row);
    },

    async listValues(siteId, resourceType, resourceId) {
      const rows = await db
        .selectFrom('metadata')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('resource_type', '=', resourceType)
        .where('resource_id', '=', resourceId)
        .orderBy('name')
        .orderBy('id')
        .execute();
      // Sorted again in JS: SQL collations differ between dialects (and Postgres locales), and the
      // port promises the code-unit order the memory adapter uses.
      return rows.map(decodeValue).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
    },

    async deleteValue(siteId, resourceType, resourceId, name) {
      const result = await db
        .deleteFrom('metadata')
        .where('site_id', '=', siteId)
        .where('resource_type', '=', resourceType)
        .where('resource_id', '=', resourceId)
        .where('name', '=', name)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async resourcesWithValue(siteId, resourceType, name, value) {
      const rows = await db
        .selectFrom('metadata')
        .select('resource_id')
        .where('site_id', '=', siteId)
        .where('resource_type', '=', resourceType)
        .where('name', '=', name)
        .where('value', '=', value)
        .orderBy('resource_id')
        .execute();
      return rows.map((row) => decodeId(row.resource_id));
    },
  };
}

function decodeResource(value: string): MetafieldResource {
  if (value === 'customer' || value === 'subscription') return value;
  throw new BillingError('storage', `Unknown metafield resource type ${value}.`);
}

function decodeInputType(value: string): MetafieldRecord['inputType'] {
  if (value === 'text' || value === 'dropdown' || value === 'radio') return value;
  throw new BillingError('storage', `Unknown metafield input type ${value}.`);
}

function decodeField(row: Selectable<MetafieldsTable>): MetafieldRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    resourceType: decodeResource(row.resource_type),
    name: row.name,
    inputType: decodeInputType(row.input_type),
    enumValues: row.enum_values === null ? null : decodeJsonStringArray(row.enum_values),
    scope: decodeJsonObject(row.scope) as unknown as MetafieldScope,
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

function decodeValue(row: Selectable<MetadataTable>): MetadataRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    resourceType: decodeResource(row.resource_type),
    resourceId: decodeId(row.resource_id),
    metafieldId: decodeId(row.metafield_id),
    name: row.name,
    value: row.value,
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}
