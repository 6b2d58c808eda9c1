import { randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { z } from 'zod';
import type { OAuthConfig } from './config';

/** What the authorization server knows of a client, however it learnt it. */
export interface OAuthClient {
  clientId: string;
  clientName: string;
  clientUri: string | null;
  redirectUris: readonly string[];
  /** Where it came from: a metadata document at the client_id URL, or RFC 7591 registration. */
  source: 'metadata_document' | 'registered';
}

/** Collection `oauthClients`: clients registered through RFC 7591. */
interface RegisteredClientDocument {
  _id: string;
  clientName: string;
  clientUri: string | null;
  redirectUris: string[];
  createdAt: Date;
}

export class OAuthClientError extends Error {
  constructor(
    readonly error: 'invalid_client_metadata' | 'invalid_redirect_uri' | 'invalid_client',
    message: string,
  ) {
    super(message);
  }
}

/**
 * OAuth 2.1 §7.5.1 / §8.4.2: redirect URIs are https, or http on a loopback address (native apps), or a private-use
 * scheme; never with a fragment. Compared exactly when used.
 */
function validRedirectUri(raw: string): boolean {
  try {
    const url = new URL(raw);
    if (url.hash) return false;
    if (url.protocol === 'https:') return true;
    if (url.protocol === 'http:') return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    // A private-use scheme has a dot in it (reverse domain name), which keeps out javascript: and data:.
    return /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/i.test(url.protocol);
  } catch {
    return false;
  }
}

const metadataFields = {
  redirect_uris: z.array(z.string().max(2000)).min(1).max(20),
  client_name: z.string().min(1).max(200).optional(),
  client_uri: z.string().url().max(2000).optional(),
  // Public clients only: this server issues no client secrets, so it cannot check one.
  token_endpoint_auth_method: z.literal('none').optional(),
  grant_types: z.array(z.enum(['authorization_code', 'refresh_token'])).optional(),
  response_types: z.array(z.literal('code')).optional(),
};
/** RFC 7591 §2 metadata this server acts on; other members (logo_uri, contacts, software_id…) are ignored, as §2 allows. */
const registrationRequest = z.object({ ...metadataFields, scope: z.string().max(2000).optional() }).passthrough();
/** The Client ID Metadata Document draft: the RFC 7591 members, plus client_id equal to the URL it was fetched from. */
const metadataDocument = z.object({ client_id: z.string(), ...metadataFields }).passthrough();

const METADATA_CACHE_MS = 5 * 60_000;
const METADATA_MAX_BYTES = 5_120;

export class OAuthClients {
  private readonly registered: Collection<RegisteredClientDocument>;
  private readonly documents = new Map<string, { client: OAuthClient; until: number }>();

  constructor(db: Db) {
    this.registered = db.collection('oauthClients');
  }

  /** RFC 7591 §3.1: a public client (no secret) with the redirect URIs it will use. */
  async register(input: unknown): Promise<{ client: OAuthClient; issuedAt: number }> {
    const parsed = registrationRequest.safeParse(input);
    if (!parsed.success) throw new OAuthClientError('invalid_client_metadata', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    const bad = parsed.data.redirect_uris.filter((u) => !validRedirectUri(u));
    if (bad.length > 0)
      throw new OAuthClientError('invalid_redirect_uri', `not allowed as a redirect URI (https, http on loopback, or a private-use scheme): ${bad.join(', ')}`);
    const doc: RegisteredClientDocument = {
      _id: `lpc_${randomBytes(18).toString('base64url')}`,
      clientName: parsed.data.client_name ?? 'Unnamed application',
      clientUri: parsed.data.client_uri ?? null,
      redirectUris: parsed.data.redirect_uris,
      createdAt: new Date(),
    };
    await this.registered.insertOne(doc);
    return { client: this.fromRegistered(doc), issuedAt: Math.floor(doc.createdAt.getTime() / 1000) };
  }

  private fromRegistered(doc: RegisteredClientDocument): OAuthClient {
    return { clientId: doc._id, clientName: doc.clientName, clientUri: doc.clientUri, redirectUris: doc.redirectUris, source: 'registered' };
  }

  /** A client by its id: a registered one, or the metadata document its URL serves. */
  async find(clientId: string, config: OAuthConfig): Promise<OAuthClient> {
    if (/^https?:\/\//i.test(clientId)) return this.fromMetadataDocument(clientId, config);
    const doc = await this.registered.findOne({ _id: clientId });
    if (!doc) throw new OAuthClientError('invalid_client', 'unknown client_id');
    return this.fromRegistered(doc);
  }

  /**
   * The Client ID Metadata Document draft (§3, §4): client_id is an https URL with a path; the document there must
   * name that same client_id. Fetched without following redirects, size-limited, cached for a few minutes.
   */
  private async fromMetadataDocument(clientId: string, config: OAuthConfig): Promise<OAuthClient> {
    const cached = this.documents.get(clientId);
    if (cached && cached.until > Date.now()) return cached.client;
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      throw new OAuthClientError('invalid_client', 'client_id is not a URL');
    }
    const loopbackHttp = url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) && config.allowHttpClientMetadata;
    if ((url.protocol !== 'https:' && !loopbackHttp) || url.pathname === '/' || url.hash || url.username || url.password) {
      throw new OAuthClientError('invalid_client', 'a URL client_id must be an https URL with a path, no fragment and no credentials');
    }
    let body: unknown;
    try {
      const res = await fetch(url, { redirect: 'error', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(5_000) });
      if (!res.ok) throw new Error(`answered ${res.status}`);
      const text = await res.text();
      if (Buffer.byteLength(text) > METADATA_MAX_BYTES) throw new Error('document larger than 5 KiB');
      body = JSON.parse(text);
    } catch (err) {
      throw new OAuthClientError('invalid_client', `could not read the client metadata document: ${(err as Error).message}`);
    }
    const parsed = metadataDocument.safeParse(body);
    if (!parsed.success) throw new OAuthClientError('invalid_client', 'the client metadata document is not valid client metadata');
    if (parsed.data.client_id !== clientId) throw new OAuthClientError('invalid_client', 'the client metadata document names another client_id');
    if (!parsed.data.redirect_uris.every(validRedirectUri))
      throw new OAuthClientError('invalid_client', 'the client metadata document has a redirect URI that is not allowed');
    const client: OAuthClient = {
      clientId,
      clientName: parsed.data.client_name ?? url.host,
      clientUri: parsed.data.client_uri ?? null,
      redirectUris: parsed.data.redirect_uris,
      source: 'metadata_document',
    };
    this.documents.set(clientId, { client, until: Date.now() + METADATA_CACHE_MS });
    return client;
  }
}
