import {
  ComponentPricePointsController,
  CouponsController,
  CurrencyPriceRole,
  ErrorArrayMapResponseError,
  ErrorStringMapResponseError,
  ListProductsPricePointsInclude,
  ProductPricePointsController,
  ProductsController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk, sdkBasicProduct, sdkFailure } from './support/maxio-sdk.js';

/** The error an SDK call failed with (the test fails if it succeeds). */
async function sdkError(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('expected the SDK call to fail');
}

/**
 * The official Maxio SDK driving the currency-price endpoints of product and component price
 * points and coupons against the server in `chargify` compat, on a site with one currency: every
 * request is refused with the error class the SDK declares for it, and the reads asked for
 * `currency_prices` parse with an empty list.
 */
describe('official Maxio SDK: currency prices', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('refuses product and component currency prices with ErrorArrayMapResponseError', async () => {
    const f = fixture();
    const c = acmeClient(f);
    const productId = await sdkBasicProduct(c);
    const product = await sdk(new ProductsController(c).readProduct(productId));
    const pricePointId = product.product.defaultProductPricePointId as number;
    const points = new ProductPricePointsController(c);

    const created = await sdkError(
      points.createProductCurrencyPrices(pricePointId, {
        currencyPrices: [{ currency: 'EUR', price: 9, role: CurrencyPriceRole.Baseline }],
      }),
    );
    expect(created).toBeInstanceOf(ErrorArrayMapResponseError);
    expect((created as ErrorArrayMapResponseError).statusCode).toBe(422);
    expect((created as ErrorArrayMapResponseError).result).toEqual({
      errors: { currency: ["Currency: EUR is not defined on the site; the site's only currency is USD."] },
    });
    const updated = await sdkError(
      points.updateProductCurrencyPrices(pricePointId, { currencyPrices: [{ id: 1, price: 10 }] }),
    );
    expect(updated).toBeInstanceOf(ErrorArrayMapResponseError);
    expect(Object.keys((updated as ErrorArrayMapResponseError).result?.errors ?? {})).toEqual(['id']);
    expect(
      await sdkFailure(
        points.createProductCurrencyPrices(999_999, {
          currencyPrices: [{ currency: 'EUR', price: 9, role: CurrencyPriceRole.Baseline }],
        }),
      ),
    ).toEqual({ status: 404, body: { errors: ['Price point 999999 not found.'] } });

    const read = await sdk(points.readProductPricePoint(productId, pricePointId, true));
    expect(read.pricePoint.currencyPrices).toEqual([]);
    const listed = await sdk(points.listProductPricePoints({ productId, currencyPrices: true }));
    expect(listed.pricePoints.map((p) => p.currencyPrices)).toEqual([[]]);
    const all = await sdk(points.listAllProductPricePoints({ include: ListProductsPricePointsInclude.CurrencyPrices }));
    expect(all.pricePoints.map((p) => p.currencyPrices)).toEqual([[]]);

    const seats = await f.engine.site('acme').components.create(product.product.productFamily?.id as number, {
      name: 'Seats',
      kind: 'quantity_based',
      unitName: 'seat',
      handle: 'seats',
      unitPrice: '5',
    });
    const componentPoints = new ComponentPricePointsController(c);
    const componentPoint = await sdk(
      componentPoints.readComponentPricePoint(String(seats.component.id), 'handle:original', true),
    );
    expect(componentPoint.pricePoint.currencyPrices).toEqual([]);
    const componentId = componentPoint.pricePoint.id as number;
    const componentCreated = await sdkError(
      componentPoints.createCurrencyPrices(componentId, {
        currencyPrices: [{ currency: 'USD', price: 5, priceId: 1 }],
      }),
    );
    expect(componentCreated).toBeInstanceOf(ErrorArrayMapResponseError);
    expect((componentCreated as ErrorArrayMapResponseError).result?.errors).toEqual({
      currency: [
        "Currency: USD is the site's currency, the price point's primary pricing; it cannot be added as a currency price.",
      ],
    });
    const componentUpdated = await sdkError(
      componentPoints.updateCurrencyPrices(componentId, { currencyPrices: [{ id: 3, price: 1 }] }),
    );
    expect(componentUpdated).toBeInstanceOf(ErrorArrayMapResponseError);
    expect((componentUpdated as ErrorArrayMapResponseError).statusCode).toBe(422);
  });

  it('refuses coupon currency prices with ErrorStringMapResponseError, and reads coupons with currency prices', async () => {
    const f = fixture();
    const c = acmeClient(f);
    await sdkBasicProduct(c);
    const acme = f.engine.site('acme');
    const amount = await acme.coupons.create({ name: 'Ten off', code: 'TENOFF', amountInCents: 1000 });
    const percent = await acme.coupons.create({ name: 'Half', code: 'HALF', percentage: '50' });
    const coupons = new CouponsController(c);

    const refused = await sdkError(
      coupons.createOrUpdateCouponCurrencyPrices(amount.id, { currencyPrices: [{ currency: 'CAD', price: 13 }] }),
    );
    expect(refused).toBeInstanceOf(ErrorStringMapResponseError);
    expect((refused as ErrorStringMapResponseError).result).toEqual({
      errors: { currency: "Currency: CAD is not defined on the site; the site's only currency is USD." },
    });
    const onPercent = await sdkError(
      coupons.createOrUpdateCouponCurrencyPrices(percent.id, { currencyPrices: [{ currency: 'CAD', price: 1 }] }),
    );
    expect(onPercent).toBeInstanceOf(ErrorStringMapResponseError);
    expect(Object.keys((onPercent as ErrorStringMapResponseError).result?.errors ?? {})).toEqual(['currency_prices']);
    expect(
      (
        await sdkFailure(
          coupons.createOrUpdateCouponCurrencyPrices(999_999, { currencyPrices: [{ currency: 'CAD', price: 1 }] }),
        )
      ).status,
    ).toBe(404);

    const read = await sdk(coupons.readCoupon(amount.familyId, amount.id, true));
    expect(read.coupon?.currencyPrices).toEqual([]);
    const found = await sdk(coupons.findCoupon(undefined, 'TENOFF', true));
    expect(found.coupon?.currencyPrices).toEqual([]);
    const listed = await sdk(coupons.listCoupons({ currencyPrices: true }));
    expect(listed.map((entry) => entry.coupon?.currencyPrices)).toEqual([[], []]);
  });
});
