/**
 * The API key of an `Authorization: Basic ...` header: the user part of `base64(user:password)`.
 * The password is ignored, as the hosted service ignores it (the SDK sends `X`, the old client
 * `x`). Undefined when the header is missing, not Basic, or carries no user.
 */
export function apiKeyFromAuthorization(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon === -1 ? decoded : decoded.slice(0, colon);
  return user === '' ? undefined : user;
}
