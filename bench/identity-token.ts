/**
 * `npm run bench:identity`: the identity token the gateway mints for every subgraph request, and the check every
 * subgraph makes of it — signing and verifying with the PEM text (as jsonwebtoken does when given a string: it
 * parses the key each time; the baseline) vs. with the key parsed once (lib/identity since issue 13's profile).
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { generateInternalKeyPair, mintInternalToken, verifyInternalToken, type Identity } from '@linepack/lib/identity';
import { measure, printTable } from './harness';

const BATCH = 2_000;
const keys = generateInternalKeyPair();
const identity: Identity = {
  subject: 'bench-key',
  kind: 'api_key',
  tenantId: '3f0c2a5e-8d3b-4c1e-9a57-0d5b8e1f2a6c',
  scopes: ['assets:read', 'measurements:read'],
  requestId: 'bench',
};
const claims = { tenant_id: identity.tenantId, scopes: identity.scopes, credential_kind: identity.kind, request_id: identity.requestId };
const options = { algorithm: 'ES256' as const, subject: identity.subject, audience: 'assets', issuer: 'linepack-gateway', expiresIn: 30 };

async function main(): Promise<void> {
  const token = mintInternalToken(identity, 'assets', keys.privateKeyPem);
  const results = [
    await measure(
      {
        name: 'sign + verify, PEM parsed per call (before)',
        items: BATCH,
        run: async () => {
          for (let i = 0; i < BATCH; i++) {
            // What jsonwebtoken does with a PEM string: the key is parsed on every call.
            jwt.sign(claims, createPrivateKey(keys.privateKeyPem), options);
            jwt.verify(token, createPublicKey(keys.publicKeyPem), { algorithms: ['ES256'], audience: 'assets', issuer: 'linepack-gateway' });
          }
        },
      },
      10,
    ),
    await measure(
      {
        name: 'mintInternalToken + verifyInternalToken (keys parsed once)',
        items: BATCH,
        run: async () => {
          for (let i = 0; i < BATCH; i++) {
            mintInternalToken(identity, 'assets', keys.privateKeyPem);
            verifyInternalToken(token, 'assets', keys.publicKeyPem);
          }
        },
      },
      10,
    ),
  ];
  printTable('Identity token per subgraph request (2,000 per run; ratio to the PEM-per-call baseline)', results);
}

void main();
