/** Customers and their payment profiles on SQL; addresses are plain columns, searchable later. */
import {
  type AddressFields,
  BillingError,
  type CustomerRecord,
  type CustomersRepository,
  type PaymentProfileRecord,
} from 'billing-engine';
import { type ExpressionBuilder, type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import { decodeId, decodeInstant, decodeInteger } from '../codecs.js';
import { compiledOnce } from '../compiled-once.js';
import type { CustomersTable, Database, PaymentProfilesTable } from '../schema.js';
import { withConstraintConflict } from './constraint-conflict.js';
import type { RepositoryContext } from './repository-context.js';

type CustomerFields = Partial<Omit<CustomerRecord, 'id' | 'siteId' | 'version'>>;
type ProfileFields = Partial<Omit<PaymentProfileRecord, 'id' | 'siteId'>>;

/** Reads of a renewal's customer and card, compiled once (see `compiled-once.ts`). */
const customerById = compiledOnce((db, siteId: number, id: number) =>
  db.selectFrom('customers').selectAll().where('site_id', '=', siteId).where('id', '=', id),
);
const profileById = compiledOnce((db, siteId: number, id: number) =>
  db.selectFrom('payment_profiles').selectAll().where('site_id', '=', siteId).where('id', '=', id),
);

/** Builds the customers repository of one transaction. */
export function createCustomersRepository(context: RepositoryContext): CustomersRepository {
  const { db, encode } = context;
  // A renewal reads its card's profile in both of its steps, often in one batched transaction
  // (issue 18). Every write of this repository forgets it (a customer's delete takes its profiles
  // by cascade); purge and site data clearing, which delete profiles too, clear every cache.
  const profiles = context.caches.of<PaymentProfileRecord>('payment_profiles');
  const referenceTaken = (reference: string | null | undefined) =>
    new BillingError('conflict', `Reference ${reference ?? ''} is already taken.`, { data: { reference } });

  return {
    async insert(customer) {
      profiles.clear();
      const values = {
        ...customerColumns(customer, encode),
        site_id: customer.siteId,
        version: 1,
      } as Insertable<CustomersTable>;
      const row = await db
        .insertInto('customers')
        .values(values)
        // NULL references never conflict, so an absent row here can only mean a taken reference.
        .onConflict((oc) => oc.columns(['site_id', 'reference']).doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row === undefined) throw referenceTaken(customer.reference);
      return decodeCustomer(row);
    },

    async findById(siteId, id) {
      const [row] = (await customerById.run(context, siteId, id)).rows;
      return row && decodeCustomer(row);
    },

    async findByReference(siteId, reference) {
      const row = await db
        .selectFrom('customers')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('reference', '=', reference)
        .executeTakeFirst();
      return row && decodeCustomer(row);
    },

    async updateAtVersion(siteId, id, expectedVersion, patch) {
      profiles.clear();
      const update = () =>
        db
          .updateTable('customers')
          .set((eb) => ({ ...customerColumns(patch, encode), version: eb('version', '+', 1) }))
          .where('site_id', '=', siteId)
          .where('id', '=', id)
          .where('version', '=', expectedVersion)
          .returningAll()
          .executeTakeFirst();
      const row =
        patch.reference === undefined || patch.reference === null
          ? await update()
          : await withConstraintConflict(context, 'unique', () => referenceTaken(patch.reference), update);
      return row && decodeCustomer(row);
    },

    async list(siteId, page, filter = {}) {
      const dateColumn = filter.dateField === 'updated_at' ? 'updated_at' : 'created_at';
      const rows = await db
        .selectFrom('customers')
        .selectAll()
        .where('site_id', '=', siteId)
        .$if(filter.search !== undefined, (qb) => qb.where((eb) => searchCondition(eb, filter.search as string)))
        .$if(filter.start !== undefined, (qb) => qb.where(dateColumn, '>=', encode.instant(filter.start as Date)))
        .$if(filter.end !== undefined, (qb) => qb.where(dateColumn, '<=', encode.instant(filter.end as Date)))
        .orderBy('id', filter.direction ?? 'asc')
        .limit(Math.max(0, page.perPage))
        .offset(Math.max(0, (page.page - 1) * page.perPage))
        .execute();
      return rows.map(decodeCustomer);
    },

    async delete(siteId, id) {
      profiles.clear();
      // Payment profiles go with it through their ON DELETE CASCADE reference.
      const result = await db
        .deleteFrom('customers')
        .where('site_id', '=', siteId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async insertPaymentProfile(profile) {
      profiles.clear();
      const values = {
        ...profileColumns(profile, encode),
        site_id: profile.siteId,
      } as Insertable<PaymentProfilesTable>;
      const row = await db.insertInto('payment_profiles').values(values).returningAll().executeTakeFirstOrThrow();
      return decodeProfile(row);
    },

    async findPaymentProfile(siteId, id) {
      return profiles.get(`${siteId}:${id}`, async () => {
        const [row] = (await profileById.run(context, siteId, id)).rows;
        return row && decodeProfile(row);
      });
    },

    async listPaymentProfiles(siteId, filter, page) {
      const rows = await db
        .selectFrom('payment_profiles')
        .selectAll()
        .where('site_id', '=', siteId)
        .$if(filter.customerId !== undefined, (qb) => qb.where('customer_id', '=', filter.customerId as number))
        .orderBy('id', 'asc')
        .limit(Math.max(0, page.perPage))
        .offset(Math.max(0, (page.page - 1) * page.perPage))
        .execute();
      return rows.map(decodeProfile);
    },

    async deletePaymentProfile(siteId, id) {
      profiles.clear();
      // The subscriptions' foreign key refuses the delete of a profile in use.
      const result = await withConstraintConflict(
        context,
        'foreign_key',
        () => new BillingError('conflict', 'The payment profile is in use by a subscription.'),
        () => db.deleteFrom('payment_profiles').where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst(),
      );
      return result.numDeletedRows > 0n;
    },

    async updatePaymentProfile(siteId, id, patch) {
      profiles.clear();
      const set = profileColumns(patch, encode);
      const row =
        Object.keys(set).length === 0
          ? await db
              .selectFrom('payment_profiles')
              .selectAll()
              .where('site_id', '=', siteId)
              .where('id', '=', id)
              .executeTakeFirst()
          : await db
              .updateTable('payment_profiles')
              .set(set)
              .where('site_id', '=', siteId)
              .where('id', '=', id)
              .returningAll()
              .executeTakeFirst();
      return row && decodeProfile(row);
    },
  };
}

/**
 * A customer search: the text, ignoring case, anywhere in a name, the email, the organization or
 * the reference (`%`, `_` and `\\` in it match only themselves), or a whole number as the id.
 */
function searchCondition(eb: ExpressionBuilder<Database, 'customers'>, search: string) {
  const pattern = `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const contains = (column: 'first_name' | 'last_name' | 'email' | 'organization' | 'reference') =>
    sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
  const byText = [
    contains('first_name'),
    contains('last_name'),
    contains('email'),
    contains('organization'),
    contains('reference'),
  ];
  const id = /^\d+$/.test(search) ? Number(search) : Number.NaN;
  return eb.or(Number.isSafeInteger(id) ? [...byText, eb('id', '=', id)] : byText);
}

/** The columns of the fields present in `fields`; keys absent or undefined are left out (unchanged). */
function customerColumns(fields: CustomerFields, encode: RepositoryContext['encode']): Updateable<CustomersTable> {
  const set: Updateable<CustomersTable> = {};
  if (fields.firstName !== undefined) set.first_name = fields.firstName;
  if (fields.lastName !== undefined) set.last_name = fields.lastName;
  if (fields.email !== undefined) set.email = fields.email;
  if (fields.reference !== undefined) set.reference = fields.reference;
  if (fields.organization !== undefined) set.organization = fields.organization;
  if (fields.phone !== undefined) set.phone = fields.phone;
  if (fields.address !== undefined) {
    set.address = fields.address.address;
    set.address2 = fields.address.address2;
    set.city = fields.address.city;
    set.state = fields.address.state;
    set.zip = fields.address.zip;
    set.country = fields.address.country;
  }
  if (fields.createdAt !== undefined) set.created_at = encode.instant(fields.createdAt);
  if (fields.updatedAt !== undefined) set.updated_at = encode.instant(fields.updatedAt);
  return set;
}

function profileColumns(fields: ProfileFields, encode: RepositoryContext['encode']): Updateable<PaymentProfilesTable> {
  const set: Updateable<PaymentProfilesTable> = {};
  if (fields.customerId !== undefined) set.customer_id = fields.customerId;
  if (fields.paymentType !== undefined) set.payment_type = fields.paymentType;
  if (fields.vaultToken !== undefined) set.vault_token = fields.vaultToken;
  if (fields.customerVaultToken !== undefined) set.customer_vault_token = fields.customerVaultToken;
  if (fields.currentVault !== undefined) set.current_vault = fields.currentVault;
  if (fields.cardType !== undefined) set.card_type = fields.cardType;
  if (fields.lastFour !== undefined) set.last_four = fields.lastFour;
  if (fields.expirationMonth !== undefined) set.expiration_month = fields.expirationMonth;
  if (fields.expirationYear !== undefined) set.expiration_year = fields.expirationYear;
  if (fields.firstName !== undefined) set.first_name = fields.firstName;
  if (fields.lastName !== undefined) set.last_name = fields.lastName;
  if (fields.billingAddress !== undefined) {
    set.billing_address = fields.billingAddress.address;
    set.billing_address2 = fields.billingAddress.address2;
    set.billing_city = fields.billingAddress.city;
    set.billing_state = fields.billingAddress.state;
    set.billing_zip = fields.billingAddress.zip;
    set.billing_country = fields.billingAddress.country;
  }
  if (fields.createdAt !== undefined) set.created_at = encode.instant(fields.createdAt);
  if (fields.updatedAt !== undefined) set.updated_at = encode.instant(fields.updatedAt);
  return set;
}

function decodeCustomer(row: Selectable<CustomersTable>): CustomerRecord {
  const address: AddressFields = {
    address: row.address,
    address2: row.address2,
    city: row.city,
    state: row.state,
    zip: row.zip,
    country: row.country,
  };
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    reference: row.reference,
    organization: row.organization,
    phone: row.phone,
    address,
    version: decodeInteger(row.version),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

function decodeProfile(row: Selectable<PaymentProfilesTable>): PaymentProfileRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    customerId: decodeId(row.customer_id),
    paymentType: paymentType(row.payment_type),
    vaultToken: row.vault_token,
    customerVaultToken: row.customer_vault_token,
    currentVault: row.current_vault,
    cardType: row.card_type,
    lastFour: row.last_four,
    expirationMonth: decodeInteger(row.expiration_month),
    expirationYear: decodeInteger(row.expiration_year),
    firstName: row.first_name,
    lastName: row.last_name,
    billingAddress: {
      address: row.billing_address,
      address2: row.billing_address2,
      city: row.billing_city,
      state: row.billing_state,
      zip: row.billing_zip,
      country: row.billing_country,
    },
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

function paymentType(value: string): PaymentProfileRecord['paymentType'] {
  if (value === 'credit_card') return value;
  throw new BillingError('storage', `Unknown payment type ${value}.`);
}
