/**
 * The site subdomain a request addresses: the first label of its `Host` header, lower-cased, port
 * dropped (`acme.localhost:3000` → `acme`), as the service's per-site hosts work. Undefined
 * when there is no usable host, which the caller answers like a wrong key.
 */
export function siteFromHost(host: string | undefined): string | undefined {
  if (host === undefined) return undefined;
  const name = host.trim().toLowerCase().replace(/:\d*$/, '');
  const label = name.split('.')[0];
  return label === undefined || label === '' ? undefined : label;
}
