import { useEffect, useState, type FormEvent } from 'react';
import { Badge } from '../components/Badge';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Dialog } from '../components/Dialog';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { SecretReveal } from '../components/SecretReveal';
import { AdminOnly, SettingsNav, useIsAdmin } from '../components/SettingsNav';
import { messageOf } from '../errors';
import { formatDate, formatDateTime, humanize } from '../format';
import { useQuery, useTitle } from '../hooks';
import { fetchScopes, graphql, useSession, type Tier } from '../session';

const KEY_FIELDS = 'id name prefix scopes tier createdAt lastUsedAt expiresAt revokedAt';
const API_KEYS_QUERY = `query ConsoleApiKeys { apiKeys { ${KEY_FIELDS} } }`;
const CREATE_MUTATION = `mutation ConsoleCreateApiKey($input: CreateApiKeyInput!) { createApiKey(input: $input) { secret apiKey { ${KEY_FIELDS} } } }`;
const ROTATE_MUTATION = `mutation ConsoleRotateApiKey($id: ID!) { rotateApiKey(id: $id) { secret apiKey { ${KEY_FIELDS} } } }`;
const REVOKE_MUTATION = `mutation ConsoleRevokeApiKey($id: ID!) { revokeApiKey(id: $id) { ${KEY_FIELDS} } }`;

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  tier: Tier;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}
interface CreatedApiKey {
  secret: string;
  apiKey: ApiKey;
}
interface ScopeInfo {
  name: string;
  description: string;
}

const TIERS: Tier[] = ['FREE', 'PRO', 'ENTERPRISE'];
const MAX_EXPIRY_DAYS = 730;

function keyStatus(key: ApiKey, now: number): 'Active' | 'Revoked' | 'Expired' {
  if (key.revokedAt) return 'Revoked';
  if (key.expiresAt && new Date(key.expiresAt).getTime() <= now) return 'Expired';
  return 'Active';
}

/** A key's secret, shown once. */
function KeySecret({ created, heading, onDone }: { created: CreatedApiKey; heading: boolean; onDone(): void }) {
  return (
    <SecretReveal
      secret={created.secret}
      label="New API key secret"
      heading={heading ? 'Your new API key' : undefined}
      warning={
        <>
          Linepack keeps only its hash, so a lost secret cannot be recovered — rotate the key instead. Key: <span className="mono">{created.apiKey.name}</span>.
        </>
      }
      onDone={onDone}
    />
  );
}

function CreateKeyDialog({ maxTier, onClose, onCreated }: { maxTier: Tier | null; onClose(): void; onCreated(key: ApiKey): void }) {
  const [scopes, setScopes] = useState<ScopeInfo[] | null>(null);
  const [scopesError, setScopesError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [tier, setTier] = useState<Tier>('FREE');
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const tiers = maxTier ? TIERS.slice(0, TIERS.indexOf(maxTier) + 1) : TIERS;

  const loadScopes = () => {
    setScopesError(null);
    fetchScopes().then(setScopes, (err: unknown) => setScopesError(`The scope list could not be loaded. ${messageOf(err)}`));
  };
  useEffect(loadScopes, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const trimmed = name.trim();
    if (!trimmed) return setError('Give the key a name, so you can recognise it later.');
    if (trimmed.length > 100) return setError('The name can be at most 100 characters.');
    if (selected.size === 0) return setError('Choose at least one scope.');
    let expiresInDays: number | null = null;
    if (expires.trim()) {
      const n = Number(expires);
      if (!Number.isInteger(n) || n < 1 || n > MAX_EXPIRY_DAYS)
        return setError(`Expires in days must be a whole number from 1 to ${MAX_EXPIRY_DAYS}, or empty.`);
      expiresInDays = n;
    }
    setBusy(true);
    try {
      const data = await graphql<{ createApiKey: CreatedApiKey }>(CREATE_MUTATION, { input: { name: trimmed, scopes: [...selected], tier, expiresInDays } });
      setCreated(data.createApiKey);
      onCreated(data.createApiKey.apiKey);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title="Create API Key" onClose={onClose}>
      {created ? (
        <KeySecret created={created} heading onDone={onClose} />
      ) : (
        <form onSubmit={submit} noValidate className="form">
          <div className="field">
            <label htmlFor="key-name">Name</label>
            <input id="key-name" type="text" value={name} maxLength={200} onChange={(e) => setName(e.target.value)} autoComplete="off" required />
          </div>
          <fieldset className="field scopes">
            <legend>Scopes</legend>
            {scopes === null && !scopesError ? <Loading what="scopes" /> : null}
            <ErrorAlert onRetry={loadScopes}>{scopesError}</ErrorAlert>
            {scopes?.map((scope) => {
              const id = `scope-${scope.name.replace(/[^a-z0-9]/gi, '-')}`;
              return (
                <div key={scope.name} className="scope-option">
                  <input
                    id={id}
                    type="checkbox"
                    checked={selected.has(scope.name)}
                    aria-describedby={`${id}-description`}
                    onChange={(e) => {
                      const next = new Set(selected);
                      if (e.target.checked) next.add(scope.name);
                      else next.delete(scope.name);
                      setSelected(next);
                    }}
                  />
                  <label htmlFor={id} className="mono">
                    {scope.name}
                  </label>
                  <span id={`${id}-description`} className="scope-description">
                    {scope.description}
                  </span>
                </div>
              );
            })}
          </fieldset>
          <div className="field-row">
            <div className="field">
              <label htmlFor="key-tier">Tier</label>
              <select id="key-tier" value={tier} onChange={(e) => setTier(e.target.value as Tier)} aria-describedby="key-tier-hint">
                {tiers.map((t) => (
                  <option key={t} value={t}>
                    {humanize(t)}
                  </option>
                ))}
              </select>
              <p id="key-tier-hint" className="hint">
                Up to your plan{maxTier ? ` (${humanize(maxTier)})` : ''}.
              </p>
            </div>
            <div className="field">
              <label htmlFor="key-expires">Expires in days</label>
              <input
                id="key-expires"
                type="number"
                inputMode="numeric"
                min={1}
                max={MAX_EXPIRY_DAYS}
                step={1}
                value={expires}
                onChange={(e) => setExpires(e.target.value)}
                aria-describedby="key-expires-hint"
              />
              <p id="key-expires-hint" className="hint">
                Optional: empty uses the tenant's default (365 days unless set otherwise).
              </p>
            </div>
          </div>
          <ErrorAlert>{error}</ErrorAlert>
          <div className="dialog-actions">
            <button type="button" className="button" onClick={onClose}>
              Cancel
            </button>
            <button type="submit" className="button button-primary" disabled={busy}>
              Create
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

function RevokeDialog({ apiKey, onClose, onRevoked }: { apiKey: ApiKey; onClose(): void; onRevoked(key: ApiKey): void }) {
  return (
    <ConfirmDialog
      title={`Revoke ${apiKey.name}?`}
      confirmLabel="Revoke key"
      onClose={onClose}
      onConfirm={async () => onRevoked((await graphql<{ revokeApiKey: ApiKey }>(REVOKE_MUTATION, { id: apiKey.id })).revokeApiKey)}
    >
      <p>
        Anything that uses the key <span className="mono">{apiKey.name}</span> ({apiKey.prefix}…) stops working at once. This cannot be undone.
      </p>
    </ConfirmDialog>
  );
}

/**
 * Rotation replaces the secret at once: whatever still uses the old one stops working, so the admin confirms knowing
 * that, and gets the new secret (shown once) right after.
 */
function RotateDialog({ apiKey, onClose, onRotated }: { apiKey: ApiKey; onClose(): void; onRotated(created: CreatedApiKey): void }) {
  return (
    <ConfirmDialog
      title={`Rotate ${apiKey.name}?`}
      confirmLabel="Rotate key"
      onClose={onClose}
      onConfirm={async () => onRotated((await graphql<{ rotateApiKey: CreatedApiKey }>(ROTATE_MUTATION, { id: apiKey.id })).rotateApiKey)}
    >
      <p>
        A new secret replaces the one of <span className="mono">{apiKey.name}</span> ({apiKey.prefix}…), with the same name, scopes and tier and the
        tenant&apos;s default lifetime.
      </p>
      <p>
        <strong>The old secret stops working at once</strong>, at every gateway: anything still using it is refused from its next request until you give it the
        new secret, which is shown once, next.
      </p>
    </ConfirmDialog>
  );
}

type Open =
  | { kind: 'none' }
  | { kind: 'create' }
  | { kind: 'revoke'; key: ApiKey }
  | { kind: 'rotate'; key: ApiKey }
  | { kind: 'rotated'; created: CreatedApiKey; oldName: string };

export function ApiKeysPage() {
  useTitle('API Keys');
  const { me } = useSession();
  const isAdmin = useIsAdmin();
  const tenant = me?.tenants.find((t) => t.tenantId === me.tenantId);
  const { data, error, loading, reload } = useQuery<{ apiKeys: ApiKey[] }>(isAdmin ? API_KEYS_QUERY : null);
  const [open, setOpen] = useState<Open>({ kind: 'none' });
  const [notice, setNotice] = useState<string | null>(null);
  const now = Date.now();

  if (!isAdmin) return <AdminOnly title="API Keys" what="manage API keys" />;

  const keys = data?.apiKeys ?? [];
  return (
    <>
      <SettingsNav />
      <div className="page-head page-head-actions">
        <div>
          <h1>API Keys</h1>
          <p className="subtitle">
            Keys let servers, scripts and the MCP companion call the API{tenant ? ` in ${tenant.name}` : ''}. A key's secret is shown once, when it is created
            or rotated.
          </p>
        </div>
        <button
          type="button"
          className="button button-primary"
          onClick={() => {
            setNotice(null);
            setOpen({ kind: 'create' });
          }}
        >
          Create API Key
        </button>
      </div>
      {notice ? <Status tone="success">{notice}</Status> : null}
      <ErrorAlert onRetry={reload}>{error}</ErrorAlert>
      {loading && !data ? <Loading what="API keys" /> : null}
      {data ? (
        <div className="table-wrap card card-flush">
          <table role="table" className="table table-stack">
            <caption>API keys</caption>
            <thead role="rowgroup">
              <tr role="row">
                <th role="columnheader" scope="col">
                  Name
                </th>
                <th role="columnheader" scope="col">
                  Prefix
                </th>
                <th role="columnheader" scope="col">
                  Scopes
                </th>
                <th role="columnheader" scope="col">
                  Tier
                </th>
                <th role="columnheader" scope="col">
                  Created
                </th>
                <th role="columnheader" scope="col">
                  Last used
                </th>
                <th role="columnheader" scope="col">
                  Expires
                </th>
                <th role="columnheader" scope="col">
                  Status
                </th>
                <th role="columnheader" scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody role="rowgroup">
              {keys.length === 0 ? (
                <tr role="row">
                  <td role="cell" colSpan={9} className="empty">
                    This tenant has no API keys yet. Create one to call the API from a script or server.
                  </td>
                </tr>
              ) : (
                keys.map((key) => {
                  const status = keyStatus(key, now);
                  return (
                    <tr role="row" key={key.id} className={status === 'Active' ? undefined : 'row-inactive'}>
                      <th role="rowheader" scope="row" className="nowrap">
                        {key.name}
                      </th>
                      <td role="cell" data-label="Prefix" className="mono nowrap">
                        {key.prefix}
                      </td>
                      <td role="cell" data-label="Scopes" className="scope-list">
                        {key.scopes.map((s) => (
                          <code key={s}>{s}</code>
                        ))}
                      </td>
                      <td role="cell" data-label="Tier">
                        {humanize(key.tier)}
                      </td>
                      <td role="cell" data-label="Created" className="nowrap">
                        {formatDate(key.createdAt)}
                      </td>
                      <td role="cell" data-label="Last used" className="nowrap">
                        {key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'Never'}
                      </td>
                      <td role="cell" data-label="Expires" className="nowrap">
                        {key.expiresAt ? formatDate(key.expiresAt) : 'Never'}
                      </td>
                      <td role="cell">
                        <Badge value={status} label={status} />
                      </td>
                      <td role="cell" className="actions">
                        {status === 'Revoked' ? null : (
                          <>
                            {status === 'Active' ? (
                              <button
                                type="button"
                                className="button button-small"
                                aria-label={`Rotate ${key.name}`}
                                onClick={() => {
                                  setNotice(null);
                                  setOpen({ kind: 'rotate', key });
                                }}
                              >
                                Rotate
                              </button>
                            ) : null}
                            <button
                              type="button"
                              className="button button-small button-danger-quiet"
                              aria-label={`Revoke ${key.name}`}
                              onClick={() => {
                                setNotice(null);
                                setOpen({ kind: 'revoke', key });
                              }}
                            >
                              Revoke
                            </button>
                          </>
                        )}
                      </td>
                    </tr>
                  );
                })
              )}
            </tbody>
          </table>
        </div>
      ) : null}

      {open.kind === 'create' ? (
        <CreateKeyDialog
          maxTier={tenant?.tier ?? null}
          onClose={() => setOpen({ kind: 'none' })}
          onCreated={(key) => {
            setNotice(`API key ${key.name} created.`);
            reload();
          }}
        />
      ) : null}
      {open.kind === 'revoke' ? (
        <RevokeDialog
          apiKey={open.key}
          onClose={() => setOpen({ kind: 'none' })}
          onRevoked={(key) => {
            setOpen({ kind: 'none' });
            setNotice(`API key ${key.name} revoked: it no longer works.`);
            reload();
          }}
        />
      ) : null}
      {open.kind === 'rotate' ? (
        <RotateDialog
          apiKey={open.key}
          onClose={() => setOpen({ kind: 'none' })}
          onRotated={(created) => {
            setOpen({ kind: 'rotated', created, oldName: open.key.name });
            reload();
          }}
        />
      ) : null}
      {open.kind === 'rotated' ? (
        <Dialog title="Your new API key" onClose={() => setOpen({ kind: 'none' })}>
          <p>
            <span className="mono">{open.oldName}</span> was rotated: its old secret stopped working, and this new one has the same name, scopes and tier.
          </p>
          <KeySecret created={open.created} heading={false} onDone={() => setOpen({ kind: 'none' })} />
        </Dialog>
      ) : null}
    </>
  );
}
