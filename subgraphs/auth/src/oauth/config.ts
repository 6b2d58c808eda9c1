import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * Where the authorization server lives and which resources it issues tokens for. Read from the environment on each
 * request (memoised on the raw values), so a process started before the gateway's public origin was known, as the
 * test stack is, still answers with the right one.
 *
 * OAUTH_ISSUER: the gateway's public origin (the issuer identifier of RFC 8414, and the gateway's resource URL).
 * OAUTH_PROTECTED_RESOURCES: JSON array of {"resource": URL, "exchangeSecret": string}: the other resource servers
 * (the MCP server) tokens may be audience-bound to, and the secret each authenticates with to exchange its tokens.
 * OAUTH_ALLOW_HTTP_CLIENT_METADATA=1: client ID metadata documents may be fetched over http from loopback (tests and
 * local development only; the draft requires https).
 */
const resourceEntry = z.object({ resource: z.string().url(), exchangeSecret: z.string().min(16) }).strict();

export interface ProtectedResource {
  resource: string;
  secretHash: Buffer;
}

export interface OAuthConfig {
  issuer: string;
  /** RFC 8707 resource value naming the gateway; its tokens carry the audience gateways already check. */
  gatewayResource: string;
  protectedResources: readonly ProtectedResource[];
  allowHttpClientMetadata: boolean;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest();

/** A resource URL compared as the client sent it, minus a trailing slash on a bare origin (both spellings are common). */
export function canonicalResource(raw: string): string | null {
  try {
    const url = new URL(raw);
    // RFC 8707 §2: an absolute URI without a fragment.
    if (url.hash || (url.protocol !== 'https:' && url.protocol !== 'http:')) return null;
    return url.pathname === '/' && url.search === '' ? url.origin : url.href;
  } catch {
    return null;
  }
}

let memo: { key: string; config: OAuthConfig | null } | null = null;

/** The configuration, or null when OAUTH_ISSUER is unset (the authorization server is off). */
export function oauthConfig(env: NodeJS.ProcessEnv = process.env): OAuthConfig | null {
  const key = `${env['OAUTH_ISSUER']}\n${env['OAUTH_PROTECTED_RESOURCES']}\n${env['OAUTH_ALLOW_HTTP_CLIENT_METADATA']}`;
  if (memo?.key === key) return memo.config;
  const issuerRaw = env['OAUTH_ISSUER'];
  let config: OAuthConfig | null = null;
  if (issuerRaw) {
    const issuer = new URL(issuerRaw).origin;
    const entries = z.array(resourceEntry).parse(JSON.parse(env['OAUTH_PROTECTED_RESOURCES'] ?? '[]'));
    config = {
      issuer,
      gatewayResource: issuer,
      protectedResources: entries.map((e) => ({ resource: canonicalResource(e.resource) ?? e.resource, secretHash: sha256(e.exchangeSecret) })),
      allowHttpClientMetadata: env['OAUTH_ALLOW_HTTP_CLIENT_METADATA'] === '1',
    };
  }
  memo = { key, config };
  return config;
}

/** The resource server a token-exchange caller authenticates as (HTTP Basic: resource URL and its secret), or null. */
export function authenticateResourceServer(config: OAuthConfig, id: string, secret: string): ProtectedResource | null {
  const server = config.protectedResources.find((r) => r.resource === canonicalResource(id));
  // Hashes of equal length, so the comparison takes the same time whatever was sent.
  return server && timingSafeEqual(server.secretHash, sha256(secret)) ? server : null;
}
