/**
 * `npm start`: a short tour of the engine on the in-memory adapter. It creates a site, a product,
 * a customer and a subscription, moves a manual clock forward four months while `runDue` renews,
 * and prints the ledger. (The HTTP server will replace this as the main job.)
 */
import { createBillingEngine, ManualClock, toMajorString } from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';

const clock = new ManualClock('2026-01-31T15:00:00Z');
const engine = createBillingEngine({ storage: createMemoryStorage(), clock });
await engine.migrate();

const { site, apiKey } = await engine.sites.create({
  subdomain: 'acme',
  currency: 'USD',
  timeZone: 'America/New_York',
  name: 'Acme',
});
console.log(
  `site ${site.subdomain} (${site.currency}, ${site.timeZone}); API key ${apiKey.slice(0, 12)}... shown once`,
);

const acme = await engine.authenticate('acme', apiKey);
const family = await acme.catalog.createFamily({ name: 'Acme Projects' });
const pro = await acme.catalog.createProduct(family.id, {
  name: 'Pro',
  priceInCents: 2900,
  interval: 1,
  intervalUnit: 'month',
});
console.log(
  `product ${pro.product.handle} v${pro.version.version}: ${toMajorString(pro.version.terms.priceInCents, site.currency)} per month`,
);

const signup = await acme.subscriptions.create({
  productHandle: 'pro',
  customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', reference: 'ada-1' },
  creditCard: { fullNumber: '4111 1111 1111 1111', expirationMonth: '12', expirationYear: 2030 },
});
console.log(
  `subscription ${signup.subscription.id} for ${signup.customer.firstName} is ${signup.subscription.state}; card ${signup.paymentProfile?.cardType} ending ${signup.paymentProfile?.lastFour}`,
);

// A price change makes version 2: new subscribers pay the new price, the existing one stays on version 1.
const repriced = await acme.catalog.updateProduct(pro.product.id, { priceInCents: 3900 });
console.log(
  `price change: product ${repriced.product.handle} v${repriced.version.version} is ${toMajorString(repriced.version.terms.priceInCents, site.currency)} per month for new subscribers`,
);
const later = await acme.subscriptions.create({
  productHandle: 'pro',
  customer: { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', reference: 'grace-1' },
  creditCard: { fullNumber: '5555 5555 5555 4444', expirationMonth: '12', expirationYear: 2030 },
});
for (const id of [signup.subscription.id, later.subscription.id]) {
  const { subscription, product, customer } = await acme.subscriptions.get(id);
  console.log(
    `  ${customer.firstName} is on v${subscription.productVersion} at ${toMajorString(product.version.terms.priceInCents, site.currency)}`,
  );
}

for (let month = 1; month <= 4; month++) {
  clock.advance({ days: 31 });
  const done = await engine.runDue();
  console.log(`${clock.now().toISOString().slice(0, 10)}: runDue renewed ${done.renewed}, declined ${done.declined}`);
}

for (const id of [signup.subscription.id, later.subscription.id]) {
  const view = await acme.subscriptions.get(id);
  console.log(
    `\nledger of subscription ${view.subscription.id}, ${view.customer.firstName} (product v${view.subscription.productVersion}):`,
  );
  console.log('  date        type      amount    balance  memo');
  for (const line of await acme.subscriptions.transactions(view.subscription.id)) {
    console.log(
      `  ${line.createdAt.toISOString().slice(0, 10)}  ${line.type.padEnd(8)} ${toMajorString(line.amountInCents, site.currency).padStart(7)}  ${toMajorString(line.endingBalanceInCents, site.currency).padStart(8)}  ${line.memo}`,
    );
  }
  console.log(
    `balance ${toMajorString(view.balanceInCents, site.currency)}; next renewal ${view.subscription.currentPeriodEndsAt.toISOString()}`,
  );
}
await engine.close();
