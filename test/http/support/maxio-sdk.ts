import { createRequire } from 'node:module';
import {
  ApiError,
  Client,
  Environment,
  IntervalUnit,
  ProductFamiliesController,
  ProductsController,
  ResponseValidationError,
} from '@maxio-com/advanced-billing-sdk';

/** The parts of an axios request config the redirecting adapter touches. */
interface AdapterConfig {
  url?: string;
  readonly headers: { set(name: string, value: string): unknown };
}

/** An axios adapter: what `axios.getAdapter('http')` returns. */
type AxiosAdapter = (config: AdapterConfig) => Promise<unknown>;

/** The one axios function the test needs. */
interface AxiosLike {
  getAdapter(name: 'http'): AxiosAdapter;
}

/**
 * The axios copy the SDK itself uses, found along the chain SDK → @apimatic/axios-client-adapter →
 * axios (real-clients §2). Another copy's `http` adapter would work too today, but only this one is
 * guaranteed to understand the config objects the SDK's axios builds.
 */
function sdkAxios(): AxiosLike {
  const fromTest = createRequire(import.meta.url);
  const fromSdk = createRequire(fromTest.resolve('@maxio-com/advanced-billing-sdk'));
  const fromAdapter = createRequire(fromSdk.resolve('@apimatic/axios-client-adapter'));
  return fromAdapter('axios') as AxiosLike;
}

/** Options of {@link maxioClient}. */
export interface MaxioClientOptions {
  /** Port of the test server on 127.0.0.1. */
  readonly port: number;
  /** The site subdomain the SDK addresses (`acme` → `https://acme.chargify.com`). */
  readonly site: string;
  readonly apiKey: string;
}

/**
 * The official Maxio SDK pointed at a local server exactly as real-clients §2 describes: its
 * hard-coded `https://{site}.chargify.com` URL is rewritten by a custom axios adapter to
 * `http://127.0.0.1:<port>` with the same path and query, and `Host` is set to
 * `{site}.localhost:<port>` so that the server still sees the site's subdomain. Everything else
 * (auth, headers, bodies, response validation) is the SDK's own.
 */
export function maxioClient(options: MaxioClientOptions): Client {
  const http = sdkAxios().getAdapter('http');
  const base = `http://127.0.0.1:${options.port}`;
  return new Client({
    basicAuthCredentials: { username: options.apiKey, password: 'X' },
    environment: Environment.US,
    site: options.site,
    timeout: 15_000,
    unstable_httpClientOptions: {
      adapter: (config: AdapterConfig) => {
        const target = new URL(config.url ?? '/', base);
        config.url = new URL(target.pathname + target.search, base).toString();
        const subdomain = target.hostname.split('.')[0] ?? options.site;
        config.headers.set('Host', `${subdomain}.localhost:${options.port}`);
        return http(config);
      },
    },
  });
}

/**
 * The result of an SDK call. A failure is rethrown saying which it was: the SDK could not parse
 * our answer (its schemas refused it), or the server answered an error status (with the body).
 */
export async function sdk<T>(call: Promise<{ result: T; statusCode: number }>): Promise<T> {
  try {
    return (await call).result;
  } catch (error) {
    if (error instanceof ResponseValidationError) throw new Error(`SDK could not parse our response: ${error.message}`);
    if (error instanceof ApiError) throw new Error(`SDK got ${error.statusCode}: ${String(error.body)}`);
    throw error;
  }
}

/** The SDK as site `acme` of a test server, with its key. */
export function acmeClient(f: { readonly port: number; readonly keys: { readonly acme: string } }): Client {
  return maxioClient({ port: f.port, site: 'acme', apiKey: f.keys.acme });
}

/** The status and parsed body of an SDK call that must fail with an error status. */
export async function sdkFailure(call: Promise<unknown>): Promise<{ status: number; body: unknown }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiError) return { status: error.statusCode, body: JSON.parse(String(error.body)) };
    throw error;
  }
  throw new Error('expected the SDK call to fail');
}

/** Through the SDK: family `plans` with product `basic` (10.00 a month); the product's id. */
export async function sdkBasicProduct(c: Client): Promise<number> {
  const family = await sdk(
    new ProductFamiliesController(c).createProductFamily({ productFamily: { name: 'Plans', handle: 'plans' } }),
  );
  const product = await sdk(
    new ProductsController(c).createProduct(String(family.productFamily?.id), {
      product: {
        name: 'Basic',
        handle: 'basic',
        description: 'Basic',
        priceInCents: BigInt(1000),
        interval: 1,
        intervalUnit: IntervalUnit.Month,
      },
    }),
  );
  return product.product.id as number;
}
