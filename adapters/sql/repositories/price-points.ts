/**
 * Price points of products on SQL. A price point's terms are `product_versions` rows marked with
 * its id; `product_price_points.version` names the current one.
 */
import {
  BillingError,
  type ComponentPricePointRecord,
  type PricePointsRepository,
  type PricePointType,
  type ProductPricePointRecord,
  type ProductTerms,
  type ProductVersionRecord,
} from 'billing-engine';
import type { Selectable, Updateable } from 'kysely';
import { decodeId, decodeInstant, decodeInteger, decodeNullableInstant } from '../codecs.js';
import type { ComponentPricePointsTable, ProductPricePointsTable } from '../schema-price-points.js';
import { decodeProduct, decodeVersion, highestVersion, insertProductVersion } from './catalog.js';
import {
  decodeComponent,
  decodeComponentVersion,
  highestComponentVersion,
  insertComponentVersion,
} from './components.js';
import { withConstraintConflict } from './constraint-conflict.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the price-points repository of one transaction. */
export function createPricePointsRepository(context: RepositoryContext): PricePointsRepository {
  const { db, encode } = context;
  // Every write of a product here clears the transaction's product cache (see `read-cache.ts`).
  const products = context.caches.of('products');

  /** Takes the product's row lock, so version numbers are handed out one writer at a time. */
  const lockProduct = async (siteId: number, productId: number, now: Date) => {
    products.clear();
    return db
      .updateTable('products')
      .set({ updated_at: encode.instant(now) })
      .where('site_id', '=', siteId)
      .where('id', '=', productId)
      .returningAll()
      .executeTakeFirst();
  };

  const find = async (siteId: number, id: number) => {
    const row = await db
      .selectFrom('product_price_points')
      .selectAll()
      .where('site_id', '=', siteId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && decodePricePoint(row);
  };

  /** Inserts a price point of either kind with its first terms as a new product version (not made current). */
  const insertWithVersion = async (
    pricePoint: Omit<ProductPricePointRecord, 'id' | 'version'>,
    terms: ProductTerms,
  ): Promise<{ pricePoint: ProductPricePointRecord; version: ProductVersionRecord }> => {
    const product = await lockProduct(pricePoint.siteId, pricePoint.productId, pricePoint.createdAt);
    if (product === undefined) throw new BillingError('not_found', `Product ${pricePoint.productId} not found.`);
    const number = (await highestVersion(context, pricePoint.siteId, pricePoint.productId)) + 1;
    const row = await db
      .insertInto('product_price_points')
      .values({
        site_id: pricePoint.siteId,
        product_id: pricePoint.productId,
        name: pricePoint.name,
        handle: pricePoint.handle,
        type: pricePoint.type,
        version: number,
        archived_at: encode.nullableInstant(pricePoint.archivedAt),
        created_at: encode.instant(pricePoint.createdAt),
        updated_at: encode.instant(pricePoint.updatedAt),
        subscription_id: pricePoint.subscriptionId ?? null,
      })
      // DO NOTHING rather than a failing statement, which would doom a Postgres transaction.
      .onConflict((oc) => oc.columns(['site_id', 'product_id', 'handle']).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row === undefined) throw handleTaken(pricePoint.handle);
    const stored = decodePricePoint(row);
    const version = await insertProductVersion(context, {
      siteId: stored.siteId,
      productId: stored.productId,
      version: number,
      terms,
      createdAt: pricePoint.createdAt,
      pricePointId: stored.id,
    });
    return { pricePoint: stored, version };
  };

  /** Takes the component's row lock, so version numbers are handed out one writer at a time. */
  const lockComponent = async (siteId: number, componentId: number, now: Date) =>
    db
      .updateTable('components')
      .set({ updated_at: encode.instant(now) })
      .where('site_id', '=', siteId)
      .where('id', '=', componentId)
      .returningAll()
      .executeTakeFirst();

  const findComponentPricePoint = async (siteId: number, id: number) => {
    const row = await db
      .selectFrom('component_price_points')
      .selectAll()
      .where('site_id', '=', siteId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && decodeComponentPricePoint(row);
  };

  return {
    async insertComponentPricePoint(pricePoint, pricing) {
      const component = await lockComponent(pricePoint.siteId, pricePoint.componentId, pricePoint.createdAt);
      if (component === undefined)
        throw new BillingError('not_found', `Component ${pricePoint.componentId} not found.`);
      const number = (await highestComponentVersion(context, pricePoint.siteId, pricePoint.componentId)) + 1;
      const row = await db
        .insertInto('component_price_points')
        .values({
          site_id: pricePoint.siteId,
          component_id: pricePoint.componentId,
          name: pricePoint.name,
          handle: pricePoint.handle,
          type: 'catalog',
          version: number,
          archived_at: encode.nullableInstant(pricePoint.archivedAt),
          created_at: encode.instant(pricePoint.createdAt),
          updated_at: encode.instant(pricePoint.updatedAt),
        })
        // DO NOTHING rather than a failing statement, which would doom a Postgres transaction.
        .onConflict((oc) => oc.columns(['site_id', 'component_id', 'handle']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) throw handleTaken(pricePoint.handle);
      const stored = decodeComponentPricePoint(row);
      const version = await insertComponentVersion(
        context,
        {
          siteId: stored.siteId,
          componentId: stored.componentId,
          version: number,
          pricing,
          createdAt: pricePoint.createdAt,
        },
        stored.id,
      );
      return { pricePoint: stored, version };
    },

    async reviseComponentPricePoint(siteId, id, patch, pricing, now) {
      const current = await findComponentPricePoint(siteId, id);
      if (current === undefined) return undefined;
      const set: Updateable<ComponentPricePointsTable> = { updated_at: encode.instant(now) };
      if (patch.name !== undefined) set.name = patch.name;
      if (patch.handle !== undefined) set.handle = patch.handle;
      let number = current.version;
      if (pricing !== undefined) {
        await lockComponent(siteId, current.componentId, now);
        number = (await highestComponentVersion(context, siteId, current.componentId)) + 1;
        set.version = number;
      }
      const update = () =>
        db
          .updateTable('component_price_points')
          .set(set)
          .where('site_id', '=', siteId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
      const handle = patch.handle;
      const row =
        handle === undefined
          ? await update()
          : await withConstraintConflict(context, 'unique', () => handleTaken(handle), update);
      const pricePoint = decodeComponentPricePoint(row);
      if (pricing === undefined) {
        const versionRow = await db
          .selectFrom('component_versions')
          .selectAll()
          .where('site_id', '=', siteId)
          .where('component_id', '=', current.componentId)
          .where('version', '=', current.version)
          .executeTakeFirstOrThrow();
        return { pricePoint, version: decodeComponentVersion(versionRow) };
      }
      const version = await insertComponentVersion(
        context,
        { siteId, componentId: current.componentId, version: number, pricing, createdAt: now },
        id,
      );
      if (pricePoint.type === 'default') {
        await db
          .updateTable('components')
          .set({ current_version: number, updated_at: encode.instant(now) })
          .where('site_id', '=', siteId)
          .where('id', '=', current.componentId)
          .execute();
      }
      return { pricePoint, version };
    },

    async setComponentPricePointArchived(siteId, id, archivedAt, now) {
      const row = await db
        .updateTable('component_price_points')
        .set({ archived_at: encode.nullableInstant(archivedAt), updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && decodeComponentPricePoint(row);
    },

    async makeDefaultComponentPricePoint(siteId, id, now) {
      const current = await findComponentPricePoint(siteId, id);
      if (current === undefined) return undefined;
      const component = await db
        .updateTable('components')
        .set({ current_version: current.version, updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', current.componentId)
        .returningAll()
        .executeTakeFirst();
      if (component === undefined) return undefined;
      await db
        .updateTable('component_price_points')
        .set({ type: 'catalog', updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('component_id', '=', current.componentId)
        .where('type', '=', 'default')
        .where('id', '!=', id)
        .execute();
      const row = await db
        .updateTable('component_price_points')
        .set({ type: 'default', updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { pricePoint: decodeComponentPricePoint(row), component: decodeComponent(component) };
    },

    findComponentPricePoint,

    async findComponentPricePointByHandle(siteId, componentId, handle) {
      const row = await db
        .selectFrom('component_price_points')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('component_id', '=', componentId)
        .where('handle', '=', handle)
        .executeTakeFirst();
      return row && decodeComponentPricePoint(row);
    },

    async findDefaultComponentPricePoint(siteId, componentId) {
      const row = await db
        .selectFrom('component_price_points')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('component_id', '=', componentId)
        .where('type', '=', 'default')
        .executeTakeFirst();
      return row && decodeComponentPricePoint(row);
    },

    async findComponentVersionPricePoint(siteId, componentId, version) {
      const row = await db
        .selectFrom('component_versions')
        .select('price_point_id')
        .where('site_id', '=', siteId)
        .where('component_id', '=', componentId)
        .where('version', '=', version)
        .executeTakeFirst();
      if (row === undefined || row.price_point_id === null) return undefined;
      return findComponentPricePoint(siteId, decodeId(row.price_point_id));
    },

    async listComponentPricePoints(siteId, options = {}) {
      const rows = await db
        .selectFrom('component_price_points')
        .selectAll()
        .where('site_id', '=', siteId)
        .$if(options.componentId !== undefined, (qb) => qb.where('component_id', '=', options.componentId as number))
        .$if(options.onlyArchived === true, (qb) => qb.where('archived_at', 'is not', null))
        .$if(options.onlyArchived !== true && options.includeArchived !== true, (qb) =>
          qb.where('archived_at', 'is', null),
        )
        .orderBy('id')
        .execute();
      return rows.map(decodeComponentPricePoint);
    },

    async insertProductPricePoint(pricePoint, terms) {
      return insertWithVersion({ ...pricePoint, type: 'catalog' }, terms);
    },

    async insertCustomProductPricePoint(pricePoint, terms) {
      return insertWithVersion({ ...pricePoint, type: 'custom' }, terms);
    },

    async setProductPricePointSubscription(siteId, id, subscriptionId, now) {
      const row = await db
        .updateTable('product_price_points')
        .set({ subscription_id: subscriptionId, updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && decodePricePoint(row);
    },

    async reviseProductPricePoint(siteId, id, patch, terms, now) {
      const current = await find(siteId, id);
      if (current === undefined) return undefined;
      const set: Updateable<ProductPricePointsTable> = { updated_at: encode.instant(now) };
      if (patch.name !== undefined) set.name = patch.name;
      if (patch.handle !== undefined) set.handle = patch.handle;
      let number = current.version;
      if (terms !== undefined) {
        await lockProduct(siteId, current.productId, now);
        number = (await highestVersion(context, siteId, current.productId)) + 1;
        set.version = number;
      }
      const update = () =>
        db
          .updateTable('product_price_points')
          .set(set)
          .where('site_id', '=', siteId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
      const handle = patch.handle;
      const row =
        handle === undefined
          ? await update()
          : await withConstraintConflict(context, 'unique', () => handleTaken(handle), update);
      const pricePoint = decodePricePoint(row);
      if (terms === undefined) {
        const row = await db
          .selectFrom('product_versions')
          .selectAll()
          .where('site_id', '=', siteId)
          .where('product_id', '=', current.productId)
          .where('version', '=', current.version)
          .executeTakeFirstOrThrow();
        return { pricePoint, version: decodeVersion(row) };
      }
      const version = await insertProductVersion(context, {
        siteId,
        productId: current.productId,
        version: number,
        terms,
        createdAt: now,
        pricePointId: id,
      });
      if (pricePoint.type === 'default') {
        products.clear();
        await db
          .updateTable('products')
          .set({ current_version: number, updated_at: encode.instant(now) })
          .where('site_id', '=', siteId)
          .where('id', '=', current.productId)
          .execute();
      }
      return { pricePoint, version };
    },

    async setProductPricePointArchived(siteId, id, archivedAt, now) {
      const row = await db
        .updateTable('product_price_points')
        .set({ archived_at: encode.nullableInstant(archivedAt), updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && decodePricePoint(row);
    },

    async makeDefaultProductPricePoint(siteId, id, now) {
      const current = await find(siteId, id);
      if (current === undefined) return undefined;
      products.clear();
      const product = await db
        .updateTable('products')
        .set({ current_version: current.version, updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', current.productId)
        .returningAll()
        .executeTakeFirst();
      if (product === undefined) return undefined;
      await db
        .updateTable('product_price_points')
        .set({ type: 'catalog', updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('product_id', '=', current.productId)
        .where('type', '=', 'default')
        .where('id', '!=', id)
        .execute();
      const row = await db
        .updateTable('product_price_points')
        .set({ type: 'default', updated_at: encode.instant(now) })
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { pricePoint: decodePricePoint(row), product: decodeProduct(product) };
    },

    findProductPricePoint: find,

    async findProductPricePointByHandle(siteId, productId, handle) {
      const row = await db
        .selectFrom('product_price_points')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('product_id', '=', productId)
        .where('handle', '=', handle)
        .executeTakeFirst();
      return row && decodePricePoint(row);
    },

    async findDefaultProductPricePoint(siteId, productId) {
      const row = await db
        .selectFrom('product_price_points')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('product_id', '=', productId)
        .where('type', '=', 'default')
        .executeTakeFirst();
      return row && decodePricePoint(row);
    },

    async listProductPricePoints(siteId, options = {}) {
      const rows = await db
        .selectFrom('product_price_points')
        .selectAll()
        .where('site_id', '=', siteId)
        .$if(options.productId !== undefined, (qb) => qb.where('product_id', '=', options.productId as number))
        .$if(options.onlyArchived === true, (qb) => qb.where('archived_at', 'is not', null))
        .$if(options.onlyArchived !== true && options.includeArchived !== true, (qb) =>
          qb.where('archived_at', 'is', null),
        )
        .orderBy('id')
        .execute();
      return rows.map(decodePricePoint);
    },
  };
}

function handleTaken(handle: string): BillingError {
  return new BillingError('conflict', `Price point handle ${handle} is already taken.`, { data: { handle } });
}

function decodePricePoint(row: Selectable<ProductPricePointsTable>): ProductPricePointRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    productId: decodeId(row.product_id),
    name: row.name,
    handle: row.handle,
    type: row.type as PricePointType,
    version: decodeInteger(row.version),
    archivedAt: decodeNullableInstant(row.archived_at),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
    // Only a custom price point has one: the others decode as they did before the column.
    ...(row.subscription_id == null ? {} : { subscriptionId: decodeId(row.subscription_id) }),
  };
}

function decodeComponentPricePoint(row: Selectable<ComponentPricePointsTable>): ComponentPricePointRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    componentId: decodeId(row.component_id),
    name: row.name,
    handle: row.handle,
    type: row.type as PricePointType,
    version: decodeInteger(row.version),
    archivedAt: decodeNullableInstant(row.archived_at),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}
