import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API key secrets, shared by the auth service (which issues and stores them) and the gateway
 * (which recognises them and keys its cache by their hash): `lpk_` + 40 base62 characters (~238 bits). That entropy makes a fast
 * hash the right choice for storage (no offline guessing is feasible), and lets the
 * gateway's hot path verify a key with one indexed lookup.
 */
export const API_KEY_PREFIX = 'lpk_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 40;
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

export const apiKeyPattern = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${SECRET_LENGTH}}$`);

export function generateApiKeySecret(): string {
  let out = '';
  while (out.length < SECRET_LENGTH) {
    for (const byte of randomBytes(64)) {
      // Rejection sampling keeps every character equally likely.
      if (byte < 248 && out.length < SECRET_LENGTH) out += ALPHABET[byte % 62];
    }
  }
  return API_KEY_PREFIX + out;
}

export function hashApiKeySecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function displayPrefix(secret: string): string {
  return secret.slice(0, DISPLAY_PREFIX_LENGTH);
}

/** Constant-time comparison of two hex digests of equal length. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
