// Rebuilds fixtures.json from Stripe's published fixtures (github.com/stripe/openapi,
// openapi/fixtures3.json), keeping only the objects the fake serves:
//   git -C <mirror of stripe/openapi> show HEAD:openapi/fixtures3.json > /tmp/fixtures3.json
//   node test/support/fake-stripe/extract-fixtures.mjs /tmp/fixtures3.json <commit>
import { readFileSync, writeFileSync } from 'node:fs';

const [source, commit] = process.argv.slice(2);
if (!source || !commit) throw new Error('usage: extract-fixtures.mjs <fixtures3.json> <stripe/openapi commit>');
const { resources } = JSON.parse(readFileSync(source, 'utf8'));
const kept = {};
for (const name of ['payment_intent', 'refund', 'customer', 'payment_method']) {
  if (!resources[name]) throw new Error(`fixtures3.json has no ${name}`);
  kept[name] = resources[name];
}
const out = { source: `github.com/stripe/openapi@${commit} openapi/fixtures3.json`, resources: kept };
writeFileSync(new URL('./fixtures.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
