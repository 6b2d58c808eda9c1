import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * Forged and tampered user tokens, each of which would let an attacker in if the gateway's
 * verification were loose. The control case shows a genuine token passes the same path.
 */
let stack: TestStack;
let tenantId: string;
let genuine: string;
let jwks: { keys: { kid: string }[] };

const claims = () => ({ email: 'victim@example.com', typ: 'access', tenants: [{ id: tenantId, role: 'ADMIN', tier: 'enterprise' }] });
const accepted = async (token: string) => (await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: token })).status;

function segments(token: string) {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return { header: decode(header), payload: decode(payload), signature, encode };
}

beforeAll(async () => {
  stack = await startTestStack();
  tenantId = (await stack.tenantWithKey()).tenantId;
  await stack.authStore.createUser({ tenantId, email: 'victim@example.com', password: 'a long enough password', role: 'VIEWER' });
  const res = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'victim@example.com', password: 'a long enough password' }),
  });
  genuine = ((await res.json()) as { access_token: string }).access_token;
  jwks = (await (await fetch(`${stack.gatewayOrigin}/auth/.well-known/jwks.json`)).json()) as typeof jwks;
});
afterAll(async () => {
  await stack?.stop();
});

it('accepts the genuine token (control case)', async () => {
  expect(await accepted(genuine)).toBe(200);
});

it('publishes the verification key as JWKS with a kid', () => {
  expect(jwks.keys).toHaveLength(1);
  expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
  expect(segments(genuine).header['kid']).toBe(jwks.keys[0]!.kid);
});

it('rejects alg: none', async () => {
  const { header, payload, encode } = segments(genuine);
  const unsigned = `${encode({ ...header, alg: 'none' })}.${encode({ ...payload, tenants: claims().tenants })}.`;
  expect(await accepted(unsigned)).toBe(401);
});

it('rejects HS256 signed with the public key as the HMAC secret', async () => {
  const jwk = jwks.keys[0]! as import('node:crypto').JsonWebKey & { kid: string };
  const publicPem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
  const confused = jwt.sign(claims(), publicPem, {
    algorithm: 'HS256',
    keyid: jwk.kid,
    issuer: 'linepack-auth',
    audience: 'linepack-api',
    subject: 'attacker',
    expiresIn: 60,
  });
  expect(await accepted(confused)).toBe(401);
});

describe('tokens signed with a key that is not the auth service’s', () => {
  const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const sign = (kid: string, overrides: jwt.SignOptions = {}) =>
    jwt.sign(claims(), otherKey, {
      algorithm: 'ES256',
      keyid: kid,
      issuer: 'linepack-auth',
      audience: 'linepack-api',
      subject: 'attacker',
      expiresIn: 60,
      ...overrides,
    });

  it('rejects a token naming an unknown kid (another environment’s key)', async () => {
    expect(await accepted(sign('another-environment-key'))).toBe(401);
  });

  it('rejects a token naming our kid but signed with another key', async () => {
    expect(await accepted(sign(jwks.keys[0]!.kid))).toBe(401);
  });
});

it('rejects a tampered payload (role escalated, signature kept)', async () => {
  const { header, payload, signature, encode } = segments(genuine);
  const escalated = `${encode(header)}.${encode({ ...payload, tenants: claims().tenants })}.${signature}`;
  expect(await accepted(escalated)).toBe(401);
});

it('rejects a payload moved to another tenant', async () => {
  const other = await stack.tenantWithKey();
  const { header, payload, signature, encode } = segments(genuine);
  const moved = `${encode(header)}.${encode({ ...payload, tenants: [{ id: other.tenantId, role: 'VIEWER', tier: 'free' }] })}.${signature}`;
  expect(await accepted(moved)).toBe(401);
});

describe('tokens properly signed by the auth key but with the wrong claims', () => {
  // The auth service's own key, to prove issuer, audience and expiry are each checked on their own.
  let signWithAuthKey: (overrides: jwt.SignOptions, payload?: object) => string;
  beforeAll(() => {
    const pem = SigningKeys.generatePem();
    const keys = new SigningKeys(pem);
    signWithAuthKey = (overrides, payload = claims()) => {
      const options: jwt.SignOptions = {
        algorithm: 'ES256',
        keyid: keys.kid,
        issuer: 'linepack-auth',
        audience: 'linepack-api',
        subject: 'u1',
        expiresIn: 60,
        ...overrides,
      };
      // `expiresIn: undefined` means a token with no expiry (or one whose exp the payload sets itself).
      if ('expiresIn' in overrides && overrides.expiresIn === undefined) delete options.expiresIn;
      return jwt.sign(payload, keys.privateKey, options);
    };
    return restartWithKey(pem);
  });

  async function restartWithKey(pem: string) {
    await stack.stop();
    stack = await startTestStack({ auth: { signingKeyPem: pem } });
    tenantId = (await stack.tenantWithKey()).tenantId;
  }

  it('accepts a correct token from that key (control case)', async () => {
    expect(await accepted(signWithAuthKey({}))).toBe(200);
  });
  it('rejects the wrong issuer', async () => {
    expect(await accepted(signWithAuthKey({ issuer: 'someone-else' }))).toBe(401);
  });
  it('rejects the wrong audience', async () => {
    expect(await accepted(signWithAuthKey({ audience: 'linepack-auth' }))).toBe(401);
  });
  it('rejects an expired token', async () => {
    expect(await accepted(signWithAuthKey({ expiresIn: -10 }))).toBe(401);
  });
  it('rejects a token without an expiry', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await accepted(signWithAuthKey({ expiresIn: undefined }, { ...claims(), iat: now }))).toBe(401);
  });
  it('rejects a token meant to live for a hundred years', async () => {
    expect(await accepted(signWithAuthKey({ expiresIn: 100 * 365 * 86_400 }))).toBe(401);
  });
  it('accepts a token as long-lived as MAX_ACCESS_TOKEN_AGE_SECONDS allows (control case)', async () => {
    expect(await accepted(signWithAuthKey({ expiresIn: 3_600 }))).toBe(200);
  });
  it('rejects a token issued a day in the future, and one issued long ago even with a far expiry', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await accepted(signWithAuthKey({ expiresIn: undefined }, { ...claims(), iat: now + 86_400, exp: now + 86_400 + 600 }))).toBe(401);
    expect(await accepted(signWithAuthKey({ expiresIn: undefined }, { ...claims(), iat: now - 7_200, exp: now + 600 }))).toBe(401);
  });
  it('allows an iat a little ahead of the gateway clock (the auth service’s clock may be)', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await accepted(signWithAuthKey({ expiresIn: undefined }, { ...claims(), iat: now + 10, exp: now + 610 }))).toBe(200);
  });
  it('rejects a token without the access type', async () => {
    expect(await accepted(signWithAuthKey({}, { ...claims(), typ: 'refresh' }))).toBe(401);
  });

  it('/auth/introspect answers every one of these exactly as the gateway does (one set of rules, lib/access-tokens.ts)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const tokens: Record<string, string> = {
      'correct (control)': signWithAuthKey({}),
      'as long-lived as allowed (control)': signWithAuthKey({ expiresIn: 3_600 }),
      'iat a little ahead (control)': signWithAuthKey({ expiresIn: undefined }, { ...claims(), iat: now + 10, exp: now + 610 }),
      '100-year expiry': signWithAuthKey({ expiresIn: 100 * 365 * 86_400 }),
      '2-hour lifetime': signWithAuthKey({ expiresIn: 7_200 }),
      'iat a day in the future': signWithAuthKey({ expiresIn: undefined }, { ...claims(), iat: now + 86_400, exp: now + 86_400 + 600 }),
      'issued two hours ago': signWithAuthKey({ expiresIn: undefined }, { ...claims(), iat: now - 7_200, exp: now + 600 }),
      'no expiry': signWithAuthKey({ expiresIn: undefined }, { ...claims(), iat: now }),
      expired: signWithAuthKey({ expiresIn: -10 }),
      'wrong issuer': signWithAuthKey({ issuer: 'someone-else' }),
      'not an access token': signWithAuthKey({}, { ...claims(), typ: 'refresh' }),
    };
    const verdicts: Record<string, { gateway: number; introspect: unknown }> = {};
    for (const [name, token] of Object.entries(tokens)) {
      const introspected = await fetch(`${stack.gatewayOrigin}/auth/introspect`, { headers: { authorization: `Bearer ${token}` } });
      verdicts[name] = { gateway: await accepted(token), introspect: ((await introspected.json()) as { active: unknown }).active };
    }
    const accept = { gateway: 200, introspect: true };
    const refuse = { gateway: 401, introspect: false };
    expect(verdicts).toEqual({
      'correct (control)': accept,
      'as long-lived as allowed (control)': accept,
      'iat a little ahead (control)': accept,
      '100-year expiry': refuse,
      '2-hour lifetime': refuse,
      'iat a day in the future': refuse,
      'issued two hours ago': refuse,
      'no expiry': refuse,
      expired: refuse,
      'wrong issuer': refuse,
      'not an access token': refuse,
    });
  });
});
