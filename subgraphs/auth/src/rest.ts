import type { Express, Request, Response } from 'express';
import { problem } from '../../../lib/errors';
import type { Logger } from '../../../lib/logger';
import { apiKeyPattern } from './api-key-secret';
import type { AuthStore } from './store';

function bearer(req: Request): string | null {
  const header = req.header('authorization');
  const match = header?.match(/^Bearer\s+(\S+)$/i);
  return match?.[1] ?? null;
}

function sendProblem(res: Response, status: number, code: string, title: string, detail?: string): void {
  res.status(status).type('application/problem+json').json(problem(status, code, title, detail));
}

/** The auth REST API (DESIGN §2), mounted under /auth and reached by clients through the gateway. */
export function authRoutes(app: Express, store: AuthStore, logger: Logger): void {
  /**
   * RFC 7662-style introspection of an API key. The gateway uses it to verify keys;
   * `sub` and `tier` are extra members it needs for identity and rate limiting.
   */
  app.get('/auth/introspect', async (req, res) => {
    const credential = bearer(req);
    if (!credential) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      sendProblem(res, 401, 'UNAUTHENTICATED', 'Missing credential', 'send the API key as Authorization: Bearer <key>');
      return;
    }
    const key = apiKeyPattern.test(credential) ? await store.findApiKeyBySecret(credential) : null;
    const now = new Date();
    if (!key || key.revokedAt || (key.expiresAt && key.expiresAt <= now)) {
      res.json({ active: false });
      return;
    }
    await store.touchApiKey(key, now).catch((err: unknown) => logger.warn({ err, keyId: key._id }, 'could not record lastUsedAt'));
    res.json({
      active: true,
      scopes: key.scopes,
      tenant_id: key.tenantId,
      expires_at: key.expiresAt?.toISOString() ?? null,
      sub: key._id,
      credential_kind: 'api_key',
      tier: key.tier.toLowerCase(),
      key_prefix: key.prefix,
    });
  });
}
