// Imports and requires the shipped SQLite and Postgres adapters where kysely is not installed;
// prints the error each gives.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const failure = (error) => ({ code: error.code, message: error.message });
const results = {};
for (const adapter of ['sqlite', 'postgres']) {
  results[`${adapter}Import`] = await import(`billing-engine/adapters/${adapter}`).then(
    () => ({ loaded: true }),
    failure,
  );
  try {
    require(`billing-engine/adapters/${adapter}`);
    results[`${adapter}Require`] = { loaded: true };
  } catch (error) {
    results[`${adapter}Require`] = failure(error);
  }
}
console.log(JSON.stringify(results));
