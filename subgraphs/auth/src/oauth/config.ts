import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { booleanSchema, httpUrlSchema, parseConfig } from '@linepack/lib/config';

/**
 * Where the authorization server lives and which resources it issues tokens for. Read from the environment on each
 * request (memoised on the raw values), so a process started before the gateway's public origin was known, as the
 * test stack is, still answers with the right one.
 *
 * OAUTH_ISSUER: the gateway's public origin (the issuer identifier of RFC 8414, and the gateway's resource URL).
 * OAUTH_PROTECTED_RESOURCES: JSON array of {"resource": URL, "exchangeSecret": string}: the other resource servers
 * (the MCP server) tokens may be audience-bound to, and the secret each authenticates with to exchange its tokens.
 * OAUTH_ALLOW_HTTP_CLIENT_METADATA=1 (a boolean): client ID metadata documents may be fetched over http from loopback (tests and
 * local development only; the draft requires https).
 */
const resourceEntry = z
  .object({
    resource: httpUrlSchema.refine((url) => canonicalResource(url) !== null, 'must have no fragment'),
    exchangeSecret: z.string().min(16),
  })
  .strict();

/** Read once at start-up by main.ts (a bad value stops the service with the variable named), then on each request. */
const oauthEnvSchema = z.object({
  // Empty is unset (an .env line without a value).
  OAUTH_ISSUER: z.preprocess((value) => (value === '' ? undefined : value), httpUrlSchema.optional()),
  OAUTH_PROTECTED_RESOURCES: z
    .string()
    .transform((raw, ctx) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON: [{"resource": URL, "exchangeSecret": string}]' });
        return z.NEVER;
      }
    })
    .pipe(z.array(resourceEntry))
    .default([]),
  OAUTH_ALLOW_HTTP_CLIENT_METADATA: booleanSchema.default(false),
});

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

/** The configuration, or null when OAUTH_ISSUER is unset (the authorization server is off); a bad value is a ConfigError naming it. */
export function oauthConfig(env: NodeJS.ProcessEnv = process.env): OAuthConfig | null {
  const key = `${env['OAUTH_ISSUER']}\n${env['OAUTH_PROTECTED_RESOURCES']}\n${env['OAUTH_ALLOW_HTTP_CLIENT_METADATA']}`;
  if (memo?.key === key) return memo.config;
  const parsed = parseConfig('auth subgraph', oauthEnvSchema, env);
  let config: OAuthConfig | null = null;
  if (parsed.OAUTH_ISSUER) {
    const issuer = new URL(parsed.OAUTH_ISSUER).origin;
    config = {
      issuer,
      gatewayResource: issuer,
      protectedResources: parsed.OAUTH_PROTECTED_RESOURCES.map((e) => ({ resource: canonicalResource(e.resource)!, secretHash: sha256(e.exchangeSecret) })),
      allowHttpClientMetadata: parsed.OAUTH_ALLOW_HTTP_CLIENT_METADATA,
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
