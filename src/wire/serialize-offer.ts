/** Offers as the service writes them (the official SDK's `Offer`, `OfferItem` and `OfferDiscount`). */
import type { OfferView } from '../services/offer-service.js';
import { type WireContext, wireTimestamp } from './wire-context.js';

/** One component of an offer (`offer_items[]`). */
export interface OfferItemJson {
  readonly component_id: number;
  readonly component_name: string;
  readonly price_point_id: number | null;
  readonly price_point_name: string | null;
  /** A decimal string, as the service writes it (`"2.0"`). */
  readonly starting_quantity: string;
  /** Whether a signup may change the quantity: never here (the offer sets it). */
  readonly editable: boolean;
  readonly currency_prices: readonly never[];
}

/** One coupon of an offer (`offer_discounts[]`). */
export interface OfferDiscountJson {
  readonly coupon_code: string;
  readonly coupon_id: number;
  readonly coupon_name: string;
}

/** An offer (inside `{"offer":{...}}` and the items of `{"offers":[...]}`). */
export interface OfferJson {
  readonly id: number;
  readonly site_id: number;
  readonly product_family_id: number;
  readonly product_family_name: string;
  readonly product_id: number;
  readonly product_name: string;
  readonly product_price_point_id: number | null;
  readonly product_price_point_name: string | null;
  readonly product_price_in_cents: number;
  readonly product_revisable_number: number;
  readonly name: string;
  readonly handle: string;
  readonly description: string | null;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  readonly archived_at: string | null;
  readonly offer_items: readonly OfferItemJson[];
  readonly offer_discounts: readonly OfferDiscountJson[];
  /** Hosted signup pages of the offer: the engine has none. */
  readonly offer_signup_pages: readonly never[];
}

/** An offer's JSON object. */
export function offerJson(view: OfferView, context: WireContext): OfferJson {
  const offer = view.offer;
  return {
    id: offer.id,
    site_id: offer.siteId,
    product_family_id: view.productFamilyId,
    product_family_name: view.productFamilyName,
    product_id: offer.productId,
    product_name: view.productName,
    product_price_point_id: view.productPricePointId,
    product_price_point_name: view.productPricePointName,
    product_price_in_cents: view.productPriceInCents,
    product_revisable_number: 0,
    name: offer.name,
    handle: offer.handle,
    description: offer.description,
    created_at: wireTimestamp(offer.createdAt, context),
    updated_at: wireTimestamp(offer.updatedAt, context),
    archived_at: wireTimestamp(offer.archivedAt, context),
    offer_items: view.items.map((item) => ({
      component_id: item.componentId,
      component_name: item.componentName,
      price_point_id: item.pricePointId,
      price_point_name: item.pricePointName,
      starting_quantity: `${item.startingQuantity}.0`,
      editable: false,
      currency_prices: [],
    })),
    offer_discounts: view.discounts.map((d) => ({
      coupon_code: d.couponCode,
      coupon_id: d.couponId,
      coupon_name: d.couponName,
    })),
    offer_signup_pages: [],
  };
}

/** `{"offer":{...}}`: the body of a create, read, archive and unarchive. */
export function serializeOffer(view: OfferView, context: WireContext): { offer: OfferJson } {
  return { offer: offerJson(view, context) };
}

/** `{"offers":[...]}`: the body of the list. */
export function serializeOfferList(views: readonly OfferView[], context: WireContext): { offers: OfferJson[] } {
  return { offers: views.map((view) => offerJson(view, context)) };
}
