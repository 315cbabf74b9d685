import type { ComponentView, CouponRecord, MetadataRecord, MetafieldRecord, NoteRecord } from 'billing-engine';
import { describe, expect, it } from 'vitest';
import {
  componentJson,
  metadataJson,
  metafieldJson,
  serializeComponent,
  serializeCoupon,
  serializeMetadataList,
  serializeMetafieldList,
  serializeMigrationPreview,
  serializeNote,
  serializeReferralCode,
  serializeSubscription,
  wirePrice,
} from '../../src/wire/index.js';
import { family, subscription, subscriptionView } from './support/records.js';

const NEW_YORK = { timeZone: 'America/New_York', currency: 'USD' } as const;
const AT = new Date('2026-01-15T12:00:00Z');

const coupon: CouponRecord = {
  id: 5,
  siteId: 1,
  familyId: 3,
  name: 'Ten',
  code: 'TEN',
  description: null,
  percentage: '12.5',
  amountInCents: null,
  recurring: true,
  durationPeriodCount: null,
  endDate: null,
  allowNegativeBalance: false,
  stackable: true,
  compoundingStrategy: 'full-price',
  conversionLimit: 100,
  redemptions: 3,
  archivedAt: null,
  createdAt: AT,
  updatedAt: AT,
};

const component: ComponentView = {
  component: {
    id: 8,
    siteId: 1,
    familyId: 3,
    kind: 'quantity_based_component',
    name: 'Seats',
    handle: 'seats',
    unitName: 'seat',
    description: null,
    taxable: false,
    currentVersion: 2,
    archivedAt: null,
    createdAt: AT,
    updatedAt: AT,
  },
  version: {
    siteId: 1,
    componentId: 8,
    version: 2,
    createdAt: AT,
    pricing: { scheme: 'per_unit', brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice: '5' }] },
  },
};

const field: MetafieldRecord = {
  id: 4,
  siteId: 1,
  resourceType: 'customer',
  name: 'size',
  inputType: 'radio',
  enumValues: ['s', 'm'],
  scope: { hosted: ['all'], csv: true, invoices: false, statements: true, portal: false },
  createdAt: AT,
  updatedAt: AT,
};

const value = (id: number, name: string): MetadataRecord => ({
  id,
  siteId: 1,
  resourceType: 'customer',
  resourceId: 11,
  metafieldId: 4,
  name,
  value: 'm',
  createdAt: AT,
  updatedAt: AT,
});

describe('serializers of the new routes', () => {
  it('coupon: string percentage and limit, the service enums, the family name when given', () => {
    expect(serializeCoupon(coupon, NEW_YORK, family)).toEqual({
      coupon: {
        id: 5,
        name: 'Ten',
        code: 'TEN',
        description: null,
        discount_type: 'percent',
        percentage: '12.5',
        amount_in_cents: null,
        product_family_id: 3,
        product_family_name: 'Acme Projects',
        recurring: true,
        recurring_scheme: 'recur_indefinitely',
        duration_period_count: null,
        allow_negative_balance: false,
        stackable: true,
        compounding_strategy: 'full-price',
        conversion_limit: '100',
        start_date: '2026-01-15T07:00:00-05:00',
        end_date: null,
        archived_at: null,
        created_at: '2026-01-15T07:00:00-05:00',
        updated_at: '2026-01-15T07:00:00-05:00',
      },
    });
    const flat = serializeCoupon(
      { ...coupon, percentage: null, amountInCents: 250, recurring: false, conversionLimit: null },
      NEW_YORK,
    ).coupon;
    expect(flat).toMatchObject({ discount_type: 'amount', amount_in_cents: 250, recurring_scheme: 'do_not_recur' });
    expect(flat.conversion_limit).toBeNull();
    expect('product_family_name' in flat).toBe(false);
    expect(serializeCoupon({ ...coupon, durationPeriodCount: 3 }, NEW_YORK).coupon.recurring_scheme).toBe(
      'recur_with_duration',
    );
  });

  it('component: prices as strings with at least two decimals, unit_price only for per_unit', () => {
    expect(serializeComponent(component, NEW_YORK)).toEqual({
      component: {
        id: 8,
        name: 'Seats',
        handle: 'seats',
        kind: 'quantity_based_component',
        unit_name: 'seat',
        description: null,
        taxable: false,
        pricing_scheme: 'per_unit',
        unit_price: '5.00',
        prices: [{ component_id: 8, starting_quantity: 1, ending_quantity: null, unit_price: '5.00' }],
        product_family_id: 3,
        archived: false,
        archived_at: null,
        version: 2,
        created_at: '2026-01-15T07:00:00-05:00',
        updated_at: '2026-01-15T07:00:00-05:00',
      },
    });
    const stairs = componentJson(
      {
        ...component,
        version: {
          ...component.version,
          pricing: {
            scheme: 'stairstep',
            brackets: [
              { startingQuantity: 1, endingQuantity: 10, unitPrice: '10.5' },
              { startingQuantity: 11, endingQuantity: null, unitPrice: '0.0125' },
            ],
          },
        },
      },
      NEW_YORK,
    );
    expect(stairs.unit_price).toBeNull();
    expect(stairs.prices.map((p) => p.unit_price)).toEqual(['10.50', '0.0125']);
    expect([wirePrice('7'), wirePrice('7.1'), wirePrice('0.125'), wirePrice('12.00')]).toEqual([
      '7.00',
      '7.10',
      '0.125',
      '12.00',
    ]);
  });

  it('metafields: string scope flags and enum; metadata: string value; lists carry paging counts', () => {
    expect(metafieldJson(field)).toEqual({
      id: 4,
      name: 'size',
      input_type: 'radio',
      enum: ['s', 'm'],
      scope: { hosted: ['all'], csv: '1', invoices: '0', statements: '1', portal: '0' },
    });
    expect(metafieldJson({ ...field, inputType: 'text', enumValues: null }).enum).toBeNull();
    expect(metadataJson(value(9, 'size'))).toEqual({
      id: 9,
      name: 'size',
      value: 'm',
      resource_id: 11,
      metafield_id: 4,
      deleted_at: null,
    });
    const values = [value(1, 'a'), value(2, 'b'), value(3, 'c')];
    expect(serializeMetadataList(values, { page: 2, perPage: 2 })).toEqual({
      total_count: 3,
      current_page: 2,
      total_pages: 2,
      per_page: 2,
      metadata: [metadataJson(value(3, 'c'))],
    });
    expect(serializeMetafieldList([], { page: 1, perPage: 20 })).toEqual({
      total_count: 0,
      current_page: 1,
      total_pages: 0,
      per_page: 20,
      metafields: [],
    });
  });

  it('note, referral code and migration preview', () => {
    const note: NoteRecord = {
      id: 2,
      siteId: 1,
      subscriptionId: 31,
      body: 'b',
      sticky: true,
      createdAt: AT,
      updatedAt: AT,
    };
    expect(serializeNote(note, { timeZone: 'UTC', currency: 'EUR' })).toEqual({
      note: {
        id: 2,
        body: 'b',
        sticky: true,
        subscription_id: 31,
        created_at: '2026-01-15T12:00:00+00:00',
        updated_at: '2026-01-15T12:00:00+00:00',
      },
    });
    expect(serializeReferralCode({ id: 31, siteId: 1, subscriptionId: 31, code: 'ABCD2345' })).toEqual({
      referral_code: { id: 31, site_id: 1, subscription_id: 31, code: 'ABCD2345' },
    });
    expect(
      serializeMigrationPreview({
        proratedAdjustmentInCents: -500,
        chargeInCents: 3000,
        paymentDueInCents: 2500,
        creditAppliedInCents: 500,
      }),
    ).toEqual({
      migration: {
        prorated_adjustment_in_cents: -500,
        charge_in_cents: 3000,
        payment_due_in_cents: 2500,
        credit_applied_in_cents: 500,
      },
    });
  });

  it('subscription: ref only with a referral code, and next_product_id from a pending delayed change', () => {
    const plain = serializeSubscription(subscriptionView, NEW_YORK).subscription;
    expect('ref' in plain).toBe(false);
    expect(plain.referral_code).toBeNull();
    expect(plain.next_product_id).toBeNull();
    const referred = serializeSubscription(
      { ...subscriptionView, subscription: { ...subscription, referralCode: 'ABCD2345', data: { nextProductId: 9 } } },
      NEW_YORK,
    ).subscription;
    expect(referred).toMatchObject({ referral_code: 'ABCD2345', ref: 'ABCD2345', next_product_id: 9 });
  });
});
