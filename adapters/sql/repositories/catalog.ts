/**
 * The catalog on SQL: product families, products, and their immutable versions, each version's
 * terms one JSON document (so a new term needs no migration).
 */
import {
  BillingError,
  type CatalogRepository,
  type ProductFamilyRecord,
  type ProductRecord,
  type ProductTerms,
  type ProductVersionRecord,
} from 'billing-engine';
import type { Selectable, Updateable } from 'kysely';
import { decodeId, decodeInstant, decodeInteger, decodeJsonObject, decodeNullableInstant } from '../codecs.js';
import type { ProductFamiliesTable, ProductsTable, ProductVersionsTable } from '../schema.js';
import { withConstraintConflict } from './constraint-conflict.js';
import { ReadCache } from './read-cache.js';
import type { RepositoryContext } from './repository-context.js';

/**
 * Builds the catalog repository of one transaction. A product version is never changed once
 * written (a change of terms is a new version), so versions read by a batched transaction's
 * commands are cached for it (see {@link ReadCache}).
 */
export function createCatalogRepository(context: RepositoryContext): CatalogRepository {
  const { db, encode } = context;
  const versions = new ReadCache<ProductVersionRecord>();
  // Families are written here only; products also by the price points (hence the shared cache).
  const families = new ReadCache<ProductFamilyRecord>();
  const products = context.caches.of<ProductRecord>('products');
  const insertVersion = (
    siteId: number,
    productId: number,
    version: number,
    terms: ProductTerms,
    at: Date,
    pricePointId: number,
  ) => insertProductVersion(context, { siteId, productId, version, terms, createdAt: at, pricePointId });

  return {
    async insertFamily(family) {
      families.clear();
      const row = await db
        .insertInto('product_families')
        .values({
          site_id: family.siteId,
          name: family.name,
          handle: family.handle,
          description: family.description,
          created_at: encode.instant(family.createdAt),
          updated_at: encode.instant(family.updatedAt),
        })
        // DO NOTHING rather than a failing statement, which would doom a Postgres transaction.
        .onConflict((oc) => oc.columns(['site_id', 'handle']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) throw handleTaken('Product family', family.handle);
      return decodeFamily(row);
    },

    findFamily(siteId, id) {
      return families.get(`${siteId}:${id}`, async () => {
        const row = await db
          .selectFrom('product_families')
          .selectAll()
          .where('site_id', '=', siteId)
          .where('id', '=', id)
          .executeTakeFirst();
        return row && decodeFamily(row);
      });
    },

    async findFamilyByHandle(siteId, handle) {
      const row = await db
        .selectFrom('product_families')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('handle', '=', handle)
        .executeTakeFirst();
      return row && decodeFamily(row);
    },

    async listFamilies(siteId) {
      const rows = await db
        .selectFrom('product_families')
        .selectAll()
        .where('site_id', '=', siteId)
        .orderBy('id')
        .execute();
      return rows.map(decodeFamily);
    },

    async updateFamily(siteId, id, patch) {
      families.clear();
      const set: Updateable<ProductFamiliesTable> = {};
      if (patch.name !== undefined) set.name = patch.name;
      if (patch.handle !== undefined) set.handle = patch.handle;
      if (patch.description !== undefined) set.description = patch.description;
      if (patch.updatedAt !== undefined) set.updated_at = encode.instant(patch.updatedAt);
      if (Object.keys(set).length === 0) return this.findFamily(siteId, id);
      const update = () =>
        db
          .updateTable('product_families')
          .set(set)
          .where('site_id', '=', siteId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst();
      const handle = patch.handle;
      const row =
        handle === undefined
          ? await update()
          : await withConstraintConflict(context, 'unique', () => handleTaken('Product family', handle), update);
      return row && decodeFamily(row);
    },

    async insertProduct(product, terms) {
      products.clear();
      const row = await db
        .insertInto('products')
        .values({
          site_id: product.siteId,
          family_id: product.familyId,
          handle: product.handle,
          current_version: 1,
          archived_at: encode.nullableInstant(product.archivedAt),
          created_at: encode.instant(product.createdAt),
          updated_at: encode.instant(product.updatedAt),
        })
        .onConflict((oc) => oc.columns(['site_id', 'handle']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) throw handleTaken('Product', product.handle);
      const stored = decodeProduct(row);
      // The default price point, with the name and handle the service gives it.
      const pricePoint = await db
        .insertInto('product_price_points')
        .values({
          site_id: stored.siteId,
          product_id: stored.id,
          name: 'Original',
          handle: 'original',
          type: 'default',
          version: 1,
          archived_at: null,
          created_at: encode.instant(product.createdAt),
          updated_at: encode.instant(product.createdAt),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const version = await insertVersion(
        stored.siteId,
        stored.id,
        1,
        terms,
        product.createdAt,
        decodeId(pricePoint.id),
      );
      return { product: stored, version };
    },

    async addProductVersion(siteId, productId, expectedCurrent, terms, now) {
      products.clear();
      // Moving the pointer first takes the product's row lock, so of two concurrent edits at one
      // expected version the second re-checks after the first commits and matches nothing.
      const row = await db
        .updateTable('products')
        .set({ current_version: expectedCurrent + 1, updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', productId)
        .where('current_version', '=', expectedCurrent)
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) return undefined;
      const number = (await highestVersion(context, siteId, productId)) + 1;
      const pricePoint = await db
        .updateTable('product_price_points')
        .set({ version: number, updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('product_id', '=', productId)
        .where('type', '=', 'default')
        .returning('id')
        .executeTakeFirstOrThrow();
      const version = await insertVersion(siteId, productId, number, terms, now, decodeId(pricePoint.id));
      if (number !== expectedCurrent + 1) {
        await db
          .updateTable('products')
          .set({ current_version: number })
          .where('site_id', '=', siteId)
          .where('id', '=', productId)
          .execute();
      }
      return { product: { ...decodeProduct(row), currentVersion: number }, version };
    },

    async setProductArchived(siteId, productId, archivedAt, now) {
      products.clear();
      const row = await db
        .updateTable('products')
        .set({ archived_at: encode.nullableInstant(archivedAt), updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', productId)
        .returningAll()
        .executeTakeFirst();
      return row && decodeProduct(row);
    },

    findProduct(siteId, id) {
      return products.get(`${siteId}:${id}`, async () => {
        const row = await db
          .selectFrom('products')
          .selectAll()
          .where('site_id', '=', siteId)
          .where('id', '=', id)
          .executeTakeFirst();
        return row && decodeProduct(row);
      });
    },

    async findProductByHandle(siteId, handle) {
      const row = await db
        .selectFrom('products')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('handle', '=', handle)
        .executeTakeFirst();
      return row && decodeProduct(row);
    },

    async listProducts(siteId, familyId) {
      const rows = await db
        .selectFrom('products')
        .selectAll()
        .where('site_id', '=', siteId)
        .$if(familyId !== undefined, (qb) => qb.where('family_id', '=', familyId as number))
        .orderBy('id')
        .execute();
      return rows.map(decodeProduct);
    },

    findProductVersion(siteId, productId, version) {
      return versions.get(`${siteId}:${productId}:${version}`, async () => {
        const row = await db
          .selectFrom('product_versions')
          .selectAll()
          .where('site_id', '=', siteId)
          .where('product_id', '=', productId)
          .where('version', '=', version)
          .executeTakeFirst();
        return row && decodeVersion(row);
      });
    },
  };
}

function handleTaken(what: string, handle: string): BillingError {
  return new BillingError('conflict', `${what} handle ${handle} is already taken.`, { data: { handle } });
}

function decodeFamily(row: Selectable<ProductFamiliesTable>): ProductFamilyRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    name: row.name,
    handle: row.handle,
    description: row.description,
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

/** Decodes a `products` row (shared with the price-points repository). */
export function decodeProduct(row: Selectable<ProductsTable>): ProductRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    familyId: decodeId(row.family_id),
    handle: row.handle,
    currentVersion: decodeInteger(row.current_version),
    archivedAt: decodeNullableInstant(row.archived_at),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

/** Decodes a `product_versions` row (shared with the price-points repository). */
export function decodeVersion(row: Selectable<ProductVersionsTable>): ProductVersionRecord {
  return {
    siteId: decodeId(row.site_id),
    productId: decodeId(row.product_id),
    version: decodeInteger(row.version),
    terms: decodeJsonObject(row.terms) as unknown as ProductTerms,
    createdAt: decodeInstant(row.created_at),
    pricePointId: row.price_point_id === null ? null : decodeId(row.price_point_id),
  };
}

/** Inserts one immutable product version (shared with the price-points repository). */
export async function insertProductVersion(
  { db, encode }: RepositoryContext,
  version: ProductVersionRecord & { readonly pricePointId: number },
): Promise<ProductVersionRecord> {
  const row = await db
    .insertInto('product_versions')
    .values({
      site_id: version.siteId,
      product_id: version.productId,
      version: version.version,
      terms: encode.json(version.terms),
      created_at: encode.instant(version.createdAt),
      price_point_id: version.pricePointId,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return decodeVersion(row);
}

/**
 * The product's highest version number. Callers hold the product's row lock (they updated it
 * first), so two writers never take the same number.
 */
export async function highestVersion({ db }: RepositoryContext, siteId: number, productId: number): Promise<number> {
  const row = await db
    .selectFrom('product_versions')
    .select((eb) => eb.fn.max('version').as('highest'))
    .where('site_id', '=', siteId)
    .where('product_id', '=', productId)
    .executeTakeFirst();
  return row?.highest == null ? 0 : decodeInteger(row.highest);
}
