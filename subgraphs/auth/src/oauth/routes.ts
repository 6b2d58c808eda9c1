import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import jwt from 'jsonwebtoken';
import type { Db } from 'mongodb';
import { z } from 'zod';
import { isDatabaseUnavailable } from '@linepack/lib/errors';
import { DATABASE_RETRY_AFTER_SECONDS, parseAuthorization } from '@linepack/lib/http';
import { isJsonContentType, jsonBody } from '@linepack/lib/json-body';
import { errorSummary, type Logger } from '@linepack/lib/logger';
import { canonicalScopes, scopeDeclarations, type Role } from '@linepack/lib/scopes';
import type { AuthStore } from '../store';
import type { TokenKeys } from '../signing-key-ring';
import type { TokenService } from '../tokens';
import { OAuthClientError, OAuthClients, type OAuthClient } from './clients';
import { authenticateResourceServer, oauthConfig, type OAuthConfig } from './config';
import {
  ACCESS_TOKEN_TYPE,
  authorizationRequest,
  checkAuthorizationParameters,
  grantedScopes,
  OAuthError,
  OAuthGrants,
  redirectTo,
  TOKEN_EXCHANGE_GRANT,
  type AuthorizationRequest,
} from './grants';

export interface OAuthRouteDependencies {
  db: Db;
  store: AuthStore;
  tokens: TokenService;
  keys: TokenKeys;
  logger: Logger;
  /** Called when a spent refresh token comes back (the family is already revoked): the audit record. */
  onRefreshReuse: (userId: string) => Promise<void>;
}

/** The console route that shows the sign-in and consent: the authorization endpoint, on the gateway's origin. */
export const CONSOLE_AUTHORIZE_PATH = '/oauth/authorize';

/** RFC 8414 §2 metadata; the gateway serves it at /.well-known/oauth-authorization-server of its public origin. */
export function authorizationServerMetadata(config: OAuthConfig): Record<string, unknown> {
  return {
    issuer: config.issuer,
    authorization_endpoint: `${config.issuer}${CONSOLE_AUTHORIZE_PATH}`,
    token_endpoint: `${config.issuer}/auth/oauth/token`,
    registration_endpoint: `${config.issuer}/auth/oauth/register`,
    jwks_uri: `${config.issuer}/auth/.well-known/jwks.json`,
    scopes_supported: [...canonicalScopes],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE_GRANT],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
    // The MCP authorization spec (2025-11-25) reads this to prefer URL client ids over registration.
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

const oauthError = (res: Response, err: OAuthError | OAuthClientError, status = err instanceof OAuthError ? err.status : 400) => {
  res.setHeader('Cache-Control', 'no-store');
  res.status(status).json({ error: err.error, error_description: err.message });
};

/** A client and the redirect URI a request names, exactly one of the client's (OAuth 2.1 §4.1.1: exact match). */
async function clientAndRedirect(
  clients: OAuthClients,
  request: AuthorizationRequest,
  config: OAuthConfig,
): Promise<{ client: OAuthClient; redirectUri: string }> {
  const client = await clients.find(request.client_id, config);
  const redirectUri = request.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  if (!redirectUri || !client.redirectUris.includes(redirectUri))
    throw new OAuthClientError('invalid_redirect_uri', 'redirect_uri is not one the client registered');
  return { client, redirectUri };
}

const decisionBody = authorizationRequest.extend({ tenant_id: z.string().uuid(), approve: z.boolean() }).strict();

const tokenRequest = z.object({
  grant_type: z.string(),
  client_id: z.string().max(2000).optional(),
  code: z.string().max(200).optional(),
  redirect_uri: z.string().max(2000).optional(),
  code_verifier: z.string().max(200).optional(),
  refresh_token: z.string().max(4096).optional(),
  resource: z.string().max(2000).optional(),
  audience: z.string().max(2000).optional(),
  scope: z.string().max(2000).optional(),
  subject_token: z.string().max(8192).optional(),
  subject_token_type: z.string().max(200).optional(),
  requested_token_type: z.string().max(200).optional(),
});

/** HTTP Basic client credentials (RFC 6749 §2.3.1: each part form-urlencoded), or null. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | null {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const at = decoded.indexOf(':');
  if (at < 0) return null;
  try {
    return { id: decodeURIComponent(decoded.slice(0, at)), secret: decodeURIComponent(decoded.slice(at + 1)) };
  } catch {
    return null;
  }
}

/**
 * The OAuth 2.1 authorization server, under /auth/oauth (so the gateway's /auth proxy reaches it). The protocol is
 * written here rather than taken from oidc-provider or @node-oauth/oauth2-server: both keep their own refresh tokens
 * and token formats, and here refresh tokens must be the auth service's own (rotation with reuse detection, sign-out
 * everywhere, gateways' revocation lists) and access tokens the ES256 JWTs gateways already verify; neither library
 * does resource-bound audiences with token exchange or client ID metadata documents.
 */
export function oauthRoutes(app: Express, deps: OAuthRouteDependencies): OAuthGrants {
  const { store, tokens, keys, logger } = deps;
  const clients = new OAuthClients(deps.db);
  const grants = new OAuthGrants(deps.db, tokens, keys);
  void grants.ensureIndexes().catch((err: Error) => logger.error({ err: err.message }, 'oauth indexes'));
  const router = express.Router();

  /** The user, the tenant and their role in it, when they are still a member. */
  const load = async (userId: string, tenantId: string) => {
    const user = await store.findUser(userId);
    const membership = user?.memberships.find((m) => m.tenantId === tenantId);
    const tenant = membership ? await store.tenants.findOne({ _id: tenantId }) : null;
    return user && membership && tenant ? { user, tenant, role: membership.role as Role } : null;
  };

  router.use((req, res, next) => {
    const config = oauthConfig();
    if (!config) return void res.status(404).json({ error: 'not_found', error_description: 'the OAuth authorization server is not configured (OAUTH_ISSUER)' });
    res.locals['oauth'] = config;
    next();
  });
  const configOf = (res: Response) => res.locals['oauth'] as OAuthConfig;

  router.get('/metadata', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(authorizationServerMetadata(configOf(res)));
  });

  /** RFC 7591 §3. */
  router.post('/register', ...jsonBody({ limit: '16kb' }), async (req, res) => {
    if (!isJsonContentType(req.header('content-type')))
      return oauthError(res, new OAuthClientError('invalid_client_metadata', 'send the metadata as application/json'));
    try {
      const { client, issuedAt } = await clients.register(req.body);
      logger.info({ clientId: client.clientId }, 'oauth client registered');
      res.setHeader('Cache-Control', 'no-store');
      res.status(201).json({
        client_id: client.clientId,
        client_id_issued_at: issuedAt,
        client_name: client.clientName,
        ...(client.clientUri ? { client_uri: client.clientUri } : {}),
        redirect_uris: client.redirectUris,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      });
    } catch (err) {
      if (err instanceof OAuthClientError) return oauthError(res, err);
      throw err;
    }
  });

  /**
   * For the console's consent page: the request checked and described. An unknown client or redirect URI is answered
   * here (400) and must never be redirected to (RFC 6749 §4.1.2.1); any other error comes with the redirect that
   * tells the client.
   */
  router.get('/authorize/request', async (req, res) => {
    const config = configOf(res);
    const parsed = authorizationRequest.safeParse(req.query);
    if (!parsed.success) return oauthError(res, new OAuthError('invalid_request', 'client_id and response_type are required, each once'));
    let target: { client: OAuthClient; redirectUri: string };
    try {
      target = await clientAndRedirect(clients, parsed.data, config);
    } catch (err) {
      if (err instanceof OAuthClientError) return oauthError(res, err);
      throw err;
    }
    try {
      const { scopes, resource } = checkAuthorizationParameters(parsed.data, config);
      const asked = scopes ?? null;
      res.setHeader('Cache-Control', 'no-store');
      res.json({
        client: { client_id: target.client.clientId, client_name: target.client.clientName, client_uri: target.client.clientUri, source: target.client.source },
        redirect_uri: target.redirectUri,
        resource,
        scopes: asked === null ? null : asked.map((name) => ({ name, description: scopeDeclarations.find((d) => d.name === name)?.description ?? '' })),
      });
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      res.status(400).json({
        error: err.error,
        error_description: err.message,
        redirect_to: redirectTo(target.redirectUri, { error: err.error, error_description: err.message, state: parsed.data.state }, config.issuer),
      });
    }
  });

  /**
   * The signed-in user's answer, with the console's own access token (never an OAuth-issued one: a client must not
   * be able to consent for itself). Approving names the tenant; scopes are those asked that the user's role holds.
   */
  router.post('/authorize/decision', ...jsonBody({ limit: '16kb' }), async (req, res) => {
    const config = configOf(res);
    const parsed = decisionBody.safeParse(req.body);
    if (!parsed.success)
      return oauthError(res, new OAuthError('invalid_request', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')));
    const presented = parseAuthorization(req.header('authorization'));
    const firstParty = presented.kind === 'bearer' && (jwt.decode(presented.token) as { client_id?: unknown } | null)?.client_id === undefined;
    const verdict =
      presented.kind === 'bearer' && firstParty ? await tokens.checkAccess(presented.token, parsed.data.tenant_id, (sid) => store.sessionRevoked(sid)) : null;
    if (!verdict?.ok) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return oauthError(
        res,
        new OAuthError(
          'access_denied',
          verdict?.reason === 'tenant_not_allowed' ? 'you are not a member of that tenant' : 'sign in first',
          verdict?.reason === 'tenant_not_allowed' ? 403 : 401,
        ),
      );
    }
    let target: { client: OAuthClient; redirectUri: string };
    try {
      target = await clientAndRedirect(clients, parsed.data, config);
    } catch (err) {
      if (err instanceof OAuthClientError) return oauthError(res, err);
      throw err;
    }
    const state = parsed.data.state;
    try {
      const { scopes, resource, codeChallenge } = checkAuthorizationParameters(parsed.data, config);
      if (!parsed.data.approve) {
        return void res.json({
          redirect_to: redirectTo(target.redirectUri, { error: 'access_denied', error_description: 'the user declined', state }, config.issuer),
        });
      }
      const granted = grantedScopes(scopes, verdict.membership.role);
      if (granted.length === 0) throw new OAuthError('invalid_scope', 'the user holds none of the scopes asked for in that tenant');
      const code = await grants.createCode({
        clientId: target.client.clientId,
        redirectUri: target.redirectUri,
        codeChallenge,
        userId: verdict.claims.sub,
        tenantId: verdict.membership.id,
        scopes: granted,
        resource,
      });
      logger.info({ clientId: target.client.clientId, userId: verdict.claims.sub, tenantId: verdict.membership.id }, 'oauth consent given');
      res.setHeader('Cache-Control', 'no-store');
      res.json({ redirect_to: redirectTo(target.redirectUri, { code, state }, config.issuer) });
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      res.json({ redirect_to: redirectTo(target.redirectUri, { error: err.error, error_description: err.message, state }, config.issuer) });
    }
  });

  /** RFC 6749 §3.2, form-encoded; answers per §5.1/§5.2. */
  router.post('/token', express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 }), async (req, res) => {
    const config = configOf(res);
    const parsed = tokenRequest.safeParse(req.body ?? {});
    if (!parsed.success || !req.is('application/x-www-form-urlencoded')) {
      return oauthError(res, new OAuthError('invalid_request', 'send the parameters form-encoded (application/x-www-form-urlencoded), each once'));
    }
    const input = parsed.data;
    try {
      let issued;
      if (input.grant_type === TOKEN_EXCHANGE_GRANT) {
        const credentials = basicCredentials(req.header('authorization'));
        const server = credentials && authenticateResourceServer(config, credentials.id, credentials.secret);
        if (!server) {
          res.setHeader('WWW-Authenticate', 'Basic realm="linepack"');
          throw new OAuthError('invalid_client', 'token exchange needs the resource server’s credentials (HTTP Basic)', 401);
        }
        if (input.requested_token_type !== undefined && input.requested_token_type !== ACCESS_TOKEN_TYPE)
          throw new OAuthError('invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
        issued = await grants.exchange(
          { subjectToken: input.subject_token ?? '', subjectTokenType: input.subject_token_type, resource: input.resource, audience: input.audience },
          server.resource,
          config,
          (sid) => store.sessionRevoked(sid),
        );
      } else {
        if (!input.client_id) throw new OAuthError('invalid_request', 'client_id is required (public clients)');
        if (input.grant_type === 'authorization_code') {
          if (!input.code) throw new OAuthError('invalid_request', 'code is required');
          issued = await grants.redeemCode(
            { code: input.code, clientId: input.client_id, redirectUri: input.redirect_uri, codeVerifier: input.code_verifier, resource: input.resource },
            config,
            load,
          );
        } else if (input.grant_type === 'refresh_token') {
          if (!input.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required');
          issued = await grants.refresh(
            { refreshToken: input.refresh_token, clientId: input.client_id, resource: input.resource, scope: input.scope },
            config,
            load,
            deps.onRefreshReuse,
          );
        } else {
          throw new OAuthError('unsupported_grant_type', `grant_type must be authorization_code, refresh_token or ${TOKEN_EXCHANGE_GRANT}`);
        }
      }
      res.setHeader('Cache-Control', 'no-store');
      res.json(issued);
    } catch (err) {
      if (err instanceof OAuthError || err instanceof OAuthClientError) return oauthError(res, err);
      throw err;
    }
  });

  router.use((_req, res) => oauthError(res, new OAuthError('not_found', 'no such OAuth route', 404)));
  router.use((err: Error & { type?: string }, req: Request, res: Response, _next: NextFunction) => {
    if (err.type === 'entity.too.large') return oauthError(res, new OAuthError('invalid_request', 'request body too large (16 KiB at most)', 413));
    if (err.type === 'entity.parse.failed') return oauthError(res, new OAuthError('invalid_request', 'malformed body'));
    // A database that cannot be reached is an outage, answered as the rest of auth answers it (lib/http.ts
    // jsonErrorHandler: 503, Retry-After, one warn line without a stack) in OAuth's own shape: temporarily_unavailable
    // is RFC 6749's code for it (§4.1.2.1), which OAuth clients know to retry.
    if (isDatabaseUnavailable(err)) {
      logger.warn({ error: errorSummary(err), requestId: res.locals['requestId'], path: `${req.baseUrl}${req.path}` }, 'database unavailable');
      res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      return oauthError(res, new OAuthError('temporarily_unavailable', 'the database is unavailable; retry shortly', 503));
    }
    logger.error({ err: err.message }, 'oauth route failed');
    oauthError(res, new OAuthError('server_error', 'internal error', 500));
  });

  app.use('/auth/oauth', router);
  return grants;
}
