/** Components on SQL, with immutable pricing versions stored as one JSON document each. */
import {
  BillingError,
  type ComponentKind,
  type ComponentPricing,
  type ComponentRecord,
  type ComponentsRepository,
  type ComponentVersionRecord,
} from 'billing-engine';
import type { Selectable, Updateable } from 'kysely';
import {
  decodeBoolean,
  decodeId,
  decodeInstant,
  decodeInteger,
  decodeJsonObject,
  decodeNullableInstant,
} from '../codecs.js';
import type { ComponentsTable, ComponentVersionsTable } from '../schema.js';
import { withConstraintConflict } from './constraint-conflict.js';
import type { RepositoryContext } from './repository-context.js';

const KINDS: ReadonlySet<string> = new Set<ComponentKind>([
  'quantity_based_component',
  'on_off_component',
  'metered_component',
]);

/** Builds the components repository of one transaction. */
export function createComponentsRepository(context: RepositoryContext): ComponentsRepository {
  const { db, encode } = context;
  const handleTaken = (handle: string | null | undefined) =>
    new BillingError('conflict', `Component handle ${handle ?? ''} is already taken.`, { data: { handle } });

  return {
    async insert(component, pricing) {
      const row = await db
        .insertInto('components')
        .values({
          site_id: component.siteId,
          family_id: component.familyId,
          kind: component.kind,
          name: component.name,
          handle: component.handle,
          unit_name: component.unitName,
          description: component.description,
          taxable: encode.boolean(component.taxable),
          current_version: 1,
          archived_at: encode.nullableInstant(component.archivedAt),
          created_at: encode.instant(component.createdAt),
          updated_at: encode.instant(component.updatedAt),
        })
        // NULL handles never conflict, so no row back means a taken handle.
        .onConflict((oc) => oc.columns(['site_id', 'handle']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) throw handleTaken(component.handle);
      const stored = decodeComponent(row);
      // Every component has a default price point from the start, named as the service names it.
      const pricePoint = await db
        .insertInto('component_price_points')
        .values({
          site_id: stored.siteId,
          component_id: stored.id,
          name: 'Original',
          handle: 'original',
          type: 'default',
          version: 1,
          archived_at: null,
          created_at: encode.instant(component.createdAt),
          updated_at: encode.instant(component.createdAt),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const version = await insertComponentVersion(
        context,
        { siteId: stored.siteId, componentId: stored.id, version: 1, pricing, createdAt: component.createdAt },
        decodeId(pricePoint.id),
      );
      return { component: stored, version };
    },

    async addVersion(siteId, componentId, expectedCurrent, pricing, now) {
      // The row is locked first, and only while the current version is still the expected one, so
      // only one of concurrent edits at one version wins. The new version is numbered after the
      // component's highest: other price points' versions may come after the current one.
      const locked = await db
        .updateTable('components')
        .set({ updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', componentId)
        .where('current_version', '=', expectedCurrent)
        .returning('id')
        .executeTakeFirst();
      if (locked === undefined) return undefined;
      const number = (await highestComponentVersion(context, siteId, componentId)) + 1;
      const row = await db
        .updateTable('components')
        .set({ current_version: number })
        .where('site_id', '=', siteId)
        .where('id', '=', componentId)
        .returningAll()
        .executeTakeFirstOrThrow();
      // The component's current pricing is its default price point's: that price point moves too.
      const pricePoint = await db
        .updateTable('component_price_points')
        .set({ version: number, updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('component_id', '=', componentId)
        .where('type', '=', 'default')
        .returning('id')
        .executeTakeFirst();
      const version = await insertComponentVersion(
        context,
        { siteId, componentId, version: number, pricing, createdAt: now },
        pricePoint === undefined ? null : decodeId(pricePoint.id),
      );
      return { component: decodeComponent(row), version };
    },

    async update(siteId, componentId, patch) {
      const set: Updateable<ComponentsTable> = {};
      if (patch.name !== undefined) set.name = patch.name;
      if (patch.unitName !== undefined) set.unit_name = patch.unitName;
      if (patch.description !== undefined) set.description = patch.description;
      if (patch.handle !== undefined) set.handle = patch.handle;
      if (patch.taxable !== undefined) set.taxable = encode.boolean(patch.taxable);
      if (patch.archivedAt !== undefined) set.archived_at = encode.nullableInstant(patch.archivedAt);
      if (patch.updatedAt !== undefined) set.updated_at = encode.instant(patch.updatedAt);
      if (Object.keys(set).length === 0) return this.findById(siteId, componentId);
      const update = () =>
        db
          .updateTable('components')
          .set(set)
          .where('site_id', '=', siteId)
          .where('id', '=', componentId)
          .returningAll()
          .executeTakeFirst();
      const row =
        patch.handle === undefined || patch.handle === null
          ? await update()
          : await withConstraintConflict(context, 'unique', () => handleTaken(patch.handle), update);
      return row && decodeComponent(row);
    },

    async findById(siteId, id) {
      const row = await db
        .selectFrom('components')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && decodeComponent(row);
    },

    async findByHandle(siteId, handle) {
      const row = await db
        .selectFrom('components')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('handle', '=', handle)
        .executeTakeFirst();
      return row && decodeComponent(row);
    },

    async list(siteId, familyId) {
      const rows = await db
        .selectFrom('components')
        .selectAll()
        .where('site_id', '=', siteId)
        .$if(familyId !== undefined, (qb) => qb.where('family_id', '=', familyId as number))
        .orderBy('id')
        .execute();
      return rows.map(decodeComponent);
    },

    async findVersion(siteId, componentId, version) {
      const row = await db
        .selectFrom('component_versions')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('component_id', '=', componentId)
        .where('version', '=', version)
        .executeTakeFirst();
      return row && decodeComponentVersion(row);
    },
  };
}

/** Inserts one component version, marked with the price point whose pricing it is. */
export async function insertComponentVersion(
  { db, encode }: RepositoryContext,
  version: ComponentVersionRecord,
  pricePointId: number | null,
): Promise<ComponentVersionRecord> {
  const row = await db
    .insertInto('component_versions')
    .values({
      site_id: version.siteId,
      component_id: version.componentId,
      version: version.version,
      pricing: encode.json(version.pricing),
      created_at: encode.instant(version.createdAt),
      price_point_id: pricePointId,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return decodeComponentVersion(row);
}

/** The highest version number of a component, of any price point (0 when it has none). */
export async function highestComponentVersion(
  { db }: RepositoryContext,
  siteId: number,
  componentId: number,
): Promise<number> {
  const row = await db
    .selectFrom('component_versions')
    .select((eb) => eb.fn.max('version').as('highest'))
    .where('site_id', '=', siteId)
    .where('component_id', '=', componentId)
    .executeTakeFirst();
  return row?.highest == null ? 0 : decodeInteger(row.highest);
}

/** A component row as the record. */
export function decodeComponent(row: Selectable<ComponentsTable>): ComponentRecord {
  if (!KINDS.has(row.kind)) throw new BillingError('storage', `Unknown component kind ${row.kind}.`);
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    familyId: decodeId(row.family_id),
    kind: row.kind as ComponentKind,
    name: row.name,
    handle: row.handle,
    unitName: row.unit_name,
    description: row.description,
    taxable: decodeBoolean(row.taxable),
    currentVersion: decodeInteger(row.current_version),
    archivedAt: decodeNullableInstant(row.archived_at),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

/** A component version row as the record. */
export function decodeComponentVersion(row: Selectable<ComponentVersionsTable>): ComponentVersionRecord {
  return {
    siteId: decodeId(row.site_id),
    componentId: decodeId(row.component_id),
    version: decodeInteger(row.version),
    pricing: decodeJsonObject(row.pricing) as unknown as ComponentPricing,
    createdAt: decodeInstant(row.created_at),
  };
}
