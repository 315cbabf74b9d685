import { BillingError } from 'billing-engine';
import { describe, expect, it } from 'vitest';
import {
  pageOf,
  pageQuery,
  parseQueryString,
  parseWireParams,
  subscriptionListQuery,
  transactionListQuery,
} from '../../src/wire/index.js';

describe('parseQueryString', () => {
  it('skips empty pairs and reads brackets', () => {
    expect(parseQueryString('?&per_page=200&state=active&&&&&&')).toEqual({ per_page: '200', state: 'active' });
    expect(parseQueryString('kinds[]=charge&kinds[]=payment&metadata[color]=blue')).toEqual({
      kinds: ['charge', 'payment'],
      metadata: { color: 'blue' },
    });
    expect(parseQueryString('')).toEqual({});
  });

  it('bounds the number of pairs', () => {
    const many = Array.from({ length: 500 }, (_, i) => `k${i}=v`).join('&');
    expect(Object.keys(parseQueryString(many))).toHaveLength(200);
  });
});

describe('list queries', () => {
  it('pageQuery: defaults, clamps and leniency', () => {
    expect(pageQuery.parse({})).toEqual({ page: 1, perPage: 20 });
    expect(pageQuery.parse({ page: '3', per_page: '50' })).toEqual({ page: 3, perPage: 50 });
    expect(pageQuery.parse({ per_page: '1000' })).toEqual({ page: 1, perPage: 200 });
    expect(pageQuery.parse({ page: '0', per_page: 'abc' })).toEqual({ page: 1, perPage: 20 });
    expect(pageQuery.parse({ page: ['1', '2'], per_page: '' })).toEqual({ page: 1, perPage: 20 });
  });

  it('transactionListQuery: direction and kinds', () => {
    expect(transactionListQuery.parse({})).toEqual({ page: 1, perPage: 20, direction: 'desc' });
    expect(transactionListQuery.parse({ direction: 'ASC', kinds: ['charge', '', 'payment'] })).toMatchObject({
      direction: 'asc',
      kinds: ['charge', 'payment'],
    });
    expect(transactionListQuery.parse({ kinds: 'charge,refund' })).toMatchObject({ kinds: ['charge', 'refund'] });
    expect(transactionListQuery.parse({ kinds: { a: 1 } })).not.toHaveProperty('kinds');
  });

  it('subscriptionListQuery: filters to the engine query; unsupported filters refused', () => {
    expect(
      parseWireParams(
        subscriptionListQuery,
        parseQueryString(
          '?&page=2&per_page=50&state=active,past_due&product=7&sort=signup_date&direction=asc&date_field=created_at&start_date=2026-01-01&metadata[tier]=gold&&',
        ),
      ),
    ).toEqual({
      page: 2,
      perPage: 50,
      state: ['active', 'past_due'],
      productId: 7,
      sort: 'signup_date',
      direction: 'asc',
      dateField: 'created_at',
      startDate: '2026-01-01',
      metadata: { tier: 'gold' },
    });
    expect(parseWireParams(subscriptionListQuery, { state: 'canceled', direction: 'sideways', page: 'x' })).toEqual({
      state: 'canceled',
    });
    let caught: unknown;
    try {
      parseWireParams(subscriptionListQuery, { product: 'pro', coupon: '3' }, 'query');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(BillingError);
    expect((caught as BillingError).messages).toEqual([
      'Product: must be a numeric product id.',
      'Coupon: is not supported as a filter by this server yet.',
    ]);
  });

  it('pageOf slices 1-based pages and returns [] past the end', () => {
    const items = [1, 2, 3, 4, 5];
    expect(pageOf(items, { page: 1, perPage: 2 })).toEqual([1, 2]);
    expect(pageOf(items, { page: 3, perPage: 2 })).toEqual([5]);
    expect(pageOf(items, { page: 4, perPage: 2 })).toEqual([]);
  });
});
