import { createCipheriv, createDecipheriv, createPrivateKey, createPublicKey, hkdfSync, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError } from '@linepack/lib/mongo';
import type { Logger } from '@linepack/lib/logger';
import { SigningKeys, publish, type PublishedKey } from './signing-keys';

/** What signs and verifies tokens: the current key, and every public key still trusted. */
export interface TokenKeys {
  readonly kid: string;
  readonly privateKey: KeyObject;
  publicKeyFor(kid: string | undefined): KeyObject | null;
  jwks(): { keys: JsonWebKey[] };
}

export interface KeyRingPolicy {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** A key signs for this long before a new one takes over (0: only `linepack keys rotate-signing` rotates). */
  rotateAfterMs: number;
  /** How often each auth replica re-reads the ring (and rotates when due). */
  refreshMs: number;
  /** How long a scheduled new generation is published before it signs (default publishAheadMsFor(refreshMs)). */
  publishAheadMs?: number;
}

/** A gateway refetches the JWKS for a kid it does not know at most this often (gateway/src/user-tokens.ts). */
const GATEWAY_JWKS_REFETCH_MS = 5_000;

/**
 * How long a new generation is in the JWKS before any token is signed with it: every auth replica has re-read the
 * ring (refreshMs) and publishes it, and a gateway that fetched the JWKS just before that may refetch (it does so for
 * an unknown kid at most every 5 s) — twice the refresh for a replica that was slow to read, plus that. So no gateway
 * ever meets a token whose key it cannot find (the default, 30 s refresh: 65 s).
 */
export function publishAheadMsFor(refreshMs: number): number {
  return 2 * refreshMs + GATEWAY_JWKS_REFETCH_MS;
}

/** `linepack keys rotate-signing` and replicas on the default refresh (30 s). */
export const DEFAULT_PUBLISH_AHEAD_MS = publishAheadMsFor(30_000);

/** Collection `signingKeys`: one generation per key; the private key is stored encrypted under the root key. */
interface SigningKeyDocument {
  _id: string;
  generation: number;
  publicKeyPem: string;
  /** AES-256-GCM under a key derived from JWT_SIGNING_KEY: a copy of the database alone cannot sign tokens. */
  wrapped: { iv: string; tag: string; data: string };
  /** When it was made (and published in the JWKS). */
  activatedAt: Date;
  /** When it starts signing: a while after it is published (publishAheadMsFor); absent in older documents (activatedAt). */
  signsFrom?: Date;
  /** When the next generation took over (its signsFrom): it signs no more, its tokens stay valid until they expire. */
  retiredAt: Date | null;
}

const signsFrom = (doc: SigningKeyDocument): number => (doc.signsFrom ?? doc.activatedAt).getTime();

const SKEW_MS = 60_000;

function wrappingKey(rootPem: string): Buffer {
  const der = createPrivateKey(rootPem).export({ type: 'pkcs8', format: 'der' });
  return Buffer.from(hkdfSync('sha256', der, 'linepack', 'signing-key-ring/v1', 32));
}

function wrap(pem: string, key: Buffer): SigningKeyDocument['wrapped'] {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(pem, 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

function unwrap(wrapped: SigningKeyDocument['wrapped'], key: Buffer): string | null {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(wrapped.iv, 'base64'));
    decipher.setAuthTag(Buffer.from(wrapped.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(wrapped.data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** The newest generation this root can decrypt (docs are newest first), with its private key. */
function newestReadable(docs: readonly SigningKeyDocument[], wrapKey: Buffer): { doc: SigningKeyDocument; pem: string } | null {
  for (const doc of docs) {
    const pem = unwrap(doc.wrapped, wrapKey);
    if (pem !== null) return { doc, pem };
  }
  return null;
}

/**
 * The token signing keys, shared by every auth replica through the database, rotated on a schedule with
 * overlap on both sides: a new generation is published in the JWKS at once and signs only from `signsFrom`
 * (publishAheadMsFor: by then every replica publishes it and every gateway can find it); the one it replaced signs
 * until then, stays in the JWKS until the last access token it signed has expired, and keeps verifying refresh
 * tokens until the last of those has; then it is deleted. JWT_SIGNING_KEY is the root: generation 0, and the key
 * that encrypts the others at rest.
 */
export class SigningKeyRing implements TokenKeys {
  private current: { kid: string; privateKey: KeyObject } | undefined;
  private trusted: { published: PublishedKey; publicUntil: number; verifyUntil: number }[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** A refresh at the moment a published generation starts signing, so every replica switches then. */
  private switchTimer: NodeJS.Timeout | null = null;

  private readonly keys: Collection<SigningKeyDocument>;

  private constructor(
    private readonly db: Db,
    private readonly rootPem: string,
    private readonly verifyOnly: PublishedKey[],
    private readonly policy: KeyRingPolicy,
    private readonly logger: Logger,
  ) {
    this.keys = db.collection('signingKeys');
  }

  static async open(db: Db, rootPem: string, verifyOnlyPems: readonly string[], policy: KeyRingPolicy, logger: Logger): Promise<SigningKeyRing> {
    const ring = new SigningKeyRing(db, rootPem, new SigningKeys(rootPem, verifyOnlyPems).published.slice(1), policy, logger);
    await ring.keys.createIndexes([{ key: { generation: 1 }, name: 'generation', unique: true }]);
    await ring.refresh();
    ring.timer = setInterval(
      () => void ring.refresh().catch((err: Error) => logger.error({ err: err.message }, 'signing keys: refresh failed')),
      policy.refreshMs,
    );
    ring.timer.unref();
    return ring;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.switchTimer) clearTimeout(this.switchTimer);
  }

  private get publishAheadMs(): number {
    return this.policy.publishAheadMs ?? publishAheadMsFor(this.policy.refreshMs);
  }

  /**
   * Makes a new generation, published now and signing `publishAheadMs` later (`linepack keys rotate-signing`, or the
   * schedule; 0: at once, for a ring that has no key to sign with meanwhile). Null when another replica just did.
   */
  static async rotate(
    db: Db,
    rootPem: string,
    pem = SigningKeys.generatePem(),
    now = new Date(),
    publishAheadMs = DEFAULT_PUBLISH_AHEAD_MS,
  ): Promise<{ kid: string; signsFrom: Date } | null> {
    const keys = db.collection<SigningKeyDocument>('signingKeys');
    const latest = await keys.findOne({}, { sort: { generation: -1 } });
    const generation = (latest?.generation ?? -1) + 1;
    const published = publish(createPublicKey(pem));
    const from = new Date(now.getTime() + publishAheadMs);
    try {
      await keys.insertOne({
        _id: published.kid,
        generation,
        publicKeyPem: createPublicKey(pem).export({ type: 'spki', format: 'pem' }).toString(),
        wrapped: wrap(pem, wrappingKey(rootPem)),
        activatedAt: now,
        signsFrom: from,
        retiredAt: null,
      });
    } catch (err) {
      if (isDuplicateKeyError(err)) return null; // another replica rotated at the same moment: its key wins
      throw err;
    }
    // The previous generations sign until the new one does.
    await keys.updateMany({ generation: { $lt: generation }, retiredAt: null }, { $set: { retiredAt: from } });
    return { kid: published.kid, signsFrom: from };
  }

  async refresh(now = new Date()): Promise<void> {
    const wrapKey = wrappingKey(this.rootPem);
    let docs = await this.keys.find({}, { sort: { generation: -1 } }).toArray();
    const latest = docs[0];
    const readable = newestReadable(docs, wrapKey);
    // Rotated by schedule only by a replica that can read the newest generation (one root for all replicas).
    const due =
      latest !== undefined &&
      readable?.doc === latest &&
      this.policy.rotateAfterMs > 0 &&
      // Counted from when it began signing: a generation still waiting to sign is never replaced.
      now.getTime() - signsFrom(latest) >= this.policy.rotateAfterMs;
    if (!latest || !readable || due) {
      if (latest && !readable) this.logger.warn('signing keys: JWT_SIGNING_KEY changed, so the ring cannot be read; starting a new generation from it');
      // The root itself when the ring is empty or unreadable (a fresh install, a replaced JWT_SIGNING_KEY); else a new key.
      const fresh = !readable ? this.rootPem : SigningKeys.generatePem();
      // Nothing to sign with meanwhile (a fresh install, an unreadable ring): the new generation signs at once.
      const rotated = await SigningKeyRing.rotate(this.db, this.rootPem, fresh, now, readable ? this.publishAheadMs : 0);
      if (rotated) this.logger.info({ kid: rotated.kid, signsFrom: rotated.signsFrom.toISOString() }, 'signing keys: a new generation is published');
      docs = await this.keys.find({}, { sort: { generation: -1 } }).toArray();
    }
    // Keys whose last refresh token has expired are gone for good.
    const accessMs = this.policy.accessTokenTtlSeconds * 1000 + SKEW_MS;
    const refreshMs = this.policy.refreshTokenTtlSeconds * 1000 + SKEW_MS;
    const dead = docs.filter((d) => d.retiredAt && d.retiredAt.getTime() + refreshMs < now.getTime());
    if (dead.length > 0) await this.keys.deleteMany({ _id: { $in: dead.map((d) => d._id) } });
    const live = docs.filter((d) => !dead.includes(d));
    // The newest generation that signs by now; a published one still waiting takes over at its signsFrom.
    const signing =
      newestReadable(
        live.filter((d) => signsFrom(d) <= now.getTime()),
        wrapKey,
      ) ?? newestReadable(live, wrapKey);
    if (!signing) throw new Error('signing keys: no generation can be read with JWT_SIGNING_KEY');
    if (this.current?.kid !== signing.doc._id) this.logger.info({ kid: signing.doc._id }, 'signing keys: this generation signs from now on');
    this.current = { kid: signing.doc._id, privateKey: createPrivateKey(signing.pem) };
    const waiting = live.find((d) => signsFrom(d) > now.getTime());
    if (this.switchTimer) clearTimeout(this.switchTimer);
    this.switchTimer = waiting
      ? setTimeout(
          () => void this.refresh().catch((err: Error) => this.logger.error({ err: err.message }, 'signing keys: refresh failed')),
          signsFrom(waiting) - now.getTime(),
        )
      : null;
    this.switchTimer?.unref();
    this.trusted = live.map((d) => ({
      published: publish(createPublicKey(d.publicKeyPem)),
      publicUntil: d.retiredAt ? d.retiredAt.getTime() + accessMs : Number.POSITIVE_INFINITY,
      verifyUntil: d.retiredAt ? d.retiredAt.getTime() + refreshMs : Number.POSITIVE_INFINITY,
    }));
  }

  get kid(): string {
    return this.current!.kid;
  }

  get privateKey(): KeyObject {
    return this.current!.privateKey;
  }

  publicKeyFor(kid: string | undefined): KeyObject | null {
    const now = Date.now();
    const ring = this.trusted.find((k) => k.published.kid === kid && k.verifyUntil > now);
    return ring?.published.publicKey ?? this.verifyOnly.find((k) => k.kid === kid)?.publicKey ?? null;
  }

  /** The public keys gateways may trust: until the last access token a retired key signed has expired. */
  jwks(): { keys: JsonWebKey[] } {
    const now = Date.now();
    const published = this.trusted.filter((k) => k.publicUntil > now).map((k) => k.published);
    const extra = this.verifyOnly.filter((v) => !published.some((p) => p.kid === v.kid));
    return { keys: [...published, ...extra].map((k) => k.publicJwk) };
  }
}
