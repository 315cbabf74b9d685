import type { BillingEngine, CreatedSite } from 'billing-engine';

/**
 * Creates the demo site `acme` (a product family, two products, a component and a coupon) and
 * returns its credentials; used by `serve` on an empty database so a newcomer has something to call.
 */
export async function createDemoSite(engine: BillingEngine): Promise<CreatedSite> {
  const created = await engine.sites.create({
    subdomain: 'acme',
    name: 'Acme',
    currency: 'USD',
    timeZone: 'America/New_York',
  });
  const acme = engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Acme Projects', handle: 'acme-projects' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  await acme.catalog.createProduct(family.id, {
    name: 'Pro',
    handle: 'pro',
    priceInCents: 4900,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 0,
  });
  await acme.components.create(family.id, {
    kind: 'quantity_based_component',
    name: 'Seats',
    unitName: 'seat',
    pricingScheme: 'per_unit',
    unitPrice: '5.00',
  });
  await acme.coupons.create({ name: 'Welcome', code: 'WELCOME10', percentage: '10', productFamilyId: family.id });
  return created;
}

/** Ready-to-paste commands for the demo site. */
export function demoInstructions(created: CreatedSite, port: number, host = '127.0.0.1'): string {
  const base = `http://${host}:${port}`;
  const auth = `-u '${created.apiKey}:x' -H 'Host: acme.localhost'`;
  return [
    `Demo site 'acme' created. These credentials are shown once:`,
    `  API key:        ${created.apiKey}`,
    `  shared key:     ${created.sharedKey}`,
    `  direct api_id:   ${created.direct.apiId}`,
    `  direct secret:   ${created.direct.apiSecret}`,
    `  direct password: ${created.direct.apiPassword}`,
    '',
    'Try:',
    `  curl ${auth} ${base}/product_families.json`,
    `  curl ${auth} -H 'Content-Type: application/json' -d '{"subscription":{"product_handle":"basic","customer_attributes":{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com"},"credit_card_attributes":{"full_number":"4111111111111111","expiration_month":"12","expiration_year":"2030"}}}' ${base}/subscriptions.json`,
    `  curl ${auth} ${base}/subscriptions.json`,
  ].join('\n');
}
