import { createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { jwkThumbprint, USER_TOKEN_ALGORITHM } from '@linepack/lib/identity';

export interface PublishedKey {
  kid: string;
  publicKey: KeyObject;
  publicJwk: JsonWebKey;
}

export function publish(publicKey: KeyObject): PublishedKey {
  const jwk = publicKey.export({ format: 'jwk' });
  // RFC 7638 thumbprint: a kid derived from the key itself, identical on every auth replica.
  const kid = jwkThumbprint(publicKey);
  return { kid, publicKey, publicJwk: { ...jwk, kid, alg: USER_TOKEN_ALGORITHM, use: 'sig' } };
}

/**
 * The key that signs new tokens, plus public keys that are still accepted (the previous signing
 * key during a rotation). Rotation without downtime: deploy the new key as signing key with the
 * old public key in JWT_VERIFY_ONLY_PUBLIC_KEYS until the old tokens have expired.
 */
export class SigningKeys {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly published: PublishedKey[];

  constructor(privateKeyPem: string, verifyOnlyPublicKeyPems: readonly string[] = []) {
    this.privateKey = createPrivateKey(privateKeyPem);
    if (this.privateKey.asymmetricKeyType !== 'ec' || this.privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      throw new Error('JWT_SIGNING_KEY must be an EC P-256 private key (ES256)');
    }
    const current = publish(createPublicKey(this.privateKey));
    this.kid = current.kid;
    const previous = verifyOnlyPublicKeyPems.map((pem) => createPublicKey(pem));
    if (previous.some((key) => key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')) {
      throw new Error('verify-only keys must be EC P-256 public keys (ES256)');
    }
    this.published = [current, ...previous.map(publish)];
  }

  /** The public key a token names in its header, if it is one of ours. */
  publicKeyFor(kid: string | undefined): KeyObject | null {
    return this.published.find((k) => k.kid === kid)?.publicKey ?? null;
  }

  jwks(): { keys: JsonWebKey[] } {
    return { keys: this.published.map((k) => k.publicJwk) };
  }

  static generatePem(): string {
    return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  }
}
