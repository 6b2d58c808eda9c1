import { useSyncExternalStore } from 'react';
import { ApiError, describeGraphQLError, describeProblem, networkError, type GraphQLErrorShape, type Problem } from './errors';

/**
 * The signed-in session. The access token lives only in this module's memory (never localStorage or
 * sessionStorage); the refresh token is an HttpOnly cookie the page cannot read, scoped to /auth. A
 * reload restores the session silently with POST /auth/refresh when the readable __Host-lp_csrf cookie says
 * there is one; a refresh runs again at ~75 % of the token's lifetime, and once more when a GraphQL call
 * answers 401, before the user is sent to sign in.
 */
export type Tier = 'FREE' | 'PRO' | 'ENTERPRISE';
export type Role = 'VIEWER' | 'ENGINEER' | 'ADMIN';

export interface Membership {
  tenantId: string;
  name: string;
  role: Role | null;
  tier: Tier | null;
}

export interface Me {
  id: string;
  kind: 'USER' | 'API_KEY';
  email: string | null;
  tenantId: string;
  scopes: string[];
  tenants: Membership[];
}

export interface SessionSnapshot {
  status: 'restoring' | 'signedOut' | 'signedIn';
  me: Me | null;
  /** The tenant every request acts in (X-Tenant-ID). */
  tenantId: string | null;
  /** Why the user was signed out, to say so on the sign-in page. */
  notice: string | null;
}

interface TokenAnswer {
  access_token: string;
  token_type: string;
  expires_in: number;
  csrf_token?: string;
}

const ME_QUERY = 'query ConsoleMe { me { id kind email tenantId scopes tenants { tenantId name role tier } } }';
/** Before the server knows `TenantMembership.tier`, the console still works (every tier offered up to ENTERPRISE is refused by the server past the plan). */
const ME_QUERY_WITHOUT_TIER = 'query ConsoleMe { me { id kind email tenantId scopes tenants { tenantId name role } } }';
const CSRF_COOKIE = '__Host-lp_csrf';
const TENANT_KEY = 'linepack.console.tenant';

function readCookie(name: string): string | null {
  for (const part of document.cookie.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) {
      try {
        return decodeURIComponent(part.slice(at + 1).trim());
      } catch {
        return null;
      }
    }
  }
  return null;
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function hasScope(me: Me | null, scope: string): boolean {
  if (!me) return false;
  return me.scopes.includes('admin:*') || me.scopes.includes(scope);
}

class Session {
  private token: string | null = null;
  /** The last CSRF value the server sent, for when the cookie cannot be read. */
  private csrf: string | null = null;
  private refreshTimer: ReturnType<typeof setTimeout> | null = null;
  private refreshing: Promise<boolean> | null = null;
  private listeners = new Set<() => void>();
  private tierKnown = true;
  private snapshot: SessionSnapshot = { status: 'restoring', me: null, tenantId: null, notice: null };

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): SessionSnapshot => this.snapshot;

  private set(next: Partial<SessionSnapshot>): void {
    this.snapshot = { ...this.snapshot, ...next };
    for (const listener of this.listeners) listener();
  }

  get accessToken(): string | null {
    return this.token;
  }

  /** On page load: restore the session from the refresh cookie when there is one. */
  async restore(): Promise<void> {
    if (!readCookie(CSRF_COOKIE)) {
      this.set({ status: 'signedOut' });
      return;
    }
    const ok = await this.refresh();
    if (!ok) {
      this.clear();
      this.set({ status: 'signedOut', notice: null });
      return;
    }
    await this.loadMeOrSignOut();
  }

  async signIn(email: string, password: string): Promise<void> {
    let res: Response;
    try {
      res = await fetch('/auth/login', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ email, password, session: 'cookie' }),
      });
    } catch {
      throw networkError();
    }
    const body = await readJson(res);
    if (!res.ok) throw describeProblem(body as Problem | null, res.status, res.headers.get('Retry-After'));
    this.adopt(body as TokenAnswer);
    this.set({ notice: null });
    await this.loadMeOrSignOut(true);
  }

  /** One refresh at a time (a refresh token is spent when used: two at once would look like a stolen token). */
  refresh(): Promise<boolean> {
    this.refreshing ??= this.doRefresh().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async doRefresh(): Promise<boolean> {
    const run = async (): Promise<boolean> => {
      const csrf = readCookie(CSRF_COOKIE) ?? this.csrf;
      if (!csrf) return false;
      let res: Response;
      try {
        res = await fetch('/auth/refresh', {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': csrf },
          body: '{}',
        });
      } catch {
        return false;
      }
      // The session is gone (revoked, expired, reused elsewhere): sign out now instead of retrying every 30 s, which
      // would count as failed authentications for this address.
      if (res.status === 400 || res.status === 401) {
        this.expire();
        return false;
      }
      if (!res.ok) return false;
      this.adopt((await readJson(res)) as TokenAnswer);
      return true;
    };
    // Other tabs of this browser share the cookie: refresh one tab at a time.
    if (navigator.locks) return navigator.locks.request('linepack-console-refresh', run);
    return run();
  }

  private adopt(answer: TokenAnswer): void {
    if (!answer || typeof answer.access_token !== 'string') throw new ApiError('The sign-in service answered unexpectedly. Try again.', 'BAD_ANSWER', 0);
    this.token = answer.access_token;
    if (answer.csrf_token) this.csrf = answer.csrf_token;
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    const lifetime = Number.isFinite(answer.expires_in) && answer.expires_in > 0 ? answer.expires_in : 900;
    this.refreshTimer = setTimeout(() => void this.silentRefresh(), Math.max(5, lifetime * 0.75) * 1000);
  }

  private async silentRefresh(): Promise<void> {
    const ok = await this.refresh();
    if (!ok && this.snapshot.status === 'signedIn') {
      // The token still works for the last quarter of its life; a GraphQL 401 will try once more.
      this.refreshTimer = setTimeout(() => void this.silentRefresh(), 30_000);
    }
  }

  private async fetchMe(tenantId: string | null): Promise<Me> {
    const query = this.tierKnown ? ME_QUERY : ME_QUERY_WITHOUT_TIER;
    try {
      const data = await graphql<{ me: Me }>(query, {}, { tenantId, noRetry: true });
      return { ...data.me, tenants: data.me.tenants.map((t) => ({ ...t, tier: t.tier ?? null })) };
    } catch (err) {
      if (this.tierKnown && err instanceof ApiError && err.code === 'GRAPHQL_VALIDATION_FAILED') {
        this.tierKnown = false;
        return this.fetchMe(tenantId);
      }
      throw err;
    }
  }

  private async loadMeOrSignOut(rethrow = false): Promise<void> {
    let remembered: string | null = null;
    try {
      remembered = localStorage.getItem(TENANT_KEY);
    } catch {
      remembered = null;
    }
    try {
      let me = await this.fetchMe(null);
      if (remembered && remembered !== me.tenantId && me.tenants.some((t) => t.tenantId === remembered)) me = await this.fetchMe(remembered);
      this.set({ status: 'signedIn', me, tenantId: me.tenantId });
    } catch (err) {
      this.clear();
      this.set({ status: 'signedOut' });
      if (rethrow) throw err;
    }
  }

  /** Switch the tenant every request acts in; `me` (scopes differ per tenant) is read again for it. */
  async selectTenant(tenantId: string): Promise<void> {
    const me = await this.fetchMe(tenantId);
    try {
      localStorage.setItem(TENANT_KEY, tenantId);
    } catch {
      // Private mode: the choice lasts for this page only.
    }
    this.set({ me, tenantId: me.tenantId });
  }

  /**
   * Ends the session on the server first: only when the server has revoked it (204), or says there is none (401),
   * is this page signed out. Otherwise the refresh cookie would sign the next visitor of this browser back in, so the
   * user stays signed in and is told (null: signed out; else why not).
   */
  async signOut(notice = 'You have signed out.'): Promise<string | null> {
    const csrf = readCookie(CSRF_COOKIE) ?? this.csrf;
    let res: Response;
    try {
      res = await fetch('/auth/logout', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...(csrf ? { 'X-CSRF-Token': csrf } : {}) },
        body: '{}',
      });
    } catch {
      return 'Signing out did not reach Linepack (no connection). You are still signed in; try again.';
    }
    if (!res.ok && res.status !== 401) return `Signing out did not work (the server answered ${res.status}). You are still signed in; try again.`;
    this.clear();
    this.set({ status: 'signedOut', me: null, tenantId: null, notice });
    return null;
  }

  /** The session could not be renewed: back to the sign-in page, saying why. */
  expire(): void {
    if (this.snapshot.status !== 'signedIn') return;
    this.clear();
    this.set({ status: 'signedOut', me: null, tenantId: null, notice: 'Your session has ended. Sign in again to continue.' });
  }

  private clear(): void {
    this.token = null;
    this.csrf = null;
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
  }
}

export const session = new Session();

export function useSession(): SessionSnapshot {
  return useSyncExternalStore(session.subscribe, session.getSnapshot);
}

interface RequestOptions {
  tenantId?: string | null;
  signal?: AbortSignal;
  /** Used by the session itself: no refresh-and-retry. */
  noRetry?: boolean;
}

interface GraphQLAnswer<T> {
  data?: T | null;
  errors?: GraphQLErrorShape[];
}

/**
 * A GraphQL call with the session's token and tenant. A 401 is answered by one refresh and one retry;
 * if that fails too the session ends (the app then shows the sign-in page). Errors are thrown as
 * ApiError with a sentence a person understands.
 */
export async function graphql<T>(query: string, variables: Record<string, unknown> = {}, options: RequestOptions = {}): Promise<T> {
  const tenantId = options.tenantId === undefined ? session.getSnapshot().tenantId : options.tenantId;
  const send = async (): Promise<Response> => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json, application/json' };
    const token = session.accessToken;
    if (token) headers['Authorization'] = `Bearer ${token}`;
    if (tenantId) headers['X-Tenant-ID'] = tenantId;
    try {
      return await fetch('/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }), signal: options.signal ?? null });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw networkError();
    }
  };
  let res = await send();
  if (res.status === 401 && !options.noRetry) {
    if (await session.refresh()) res = await send();
    if (res.status === 401) session.expire();
  }
  const body = (await readJson(res)) as GraphQLAnswer<T> | null;
  const requestId = res.headers.get('X-Request-ID');
  const first = body?.errors?.[0];
  if (first) throw describeGraphQLError(first, res.status, res.headers.get('Retry-After'), requestId);
  if (!res.ok || !body || body.data === undefined || body.data === null) {
    throw describeGraphQLError({ message: `The request failed (HTTP ${res.status}).` }, res.status, res.headers.get('Retry-After'), requestId);
  }
  return body.data;
}

/** GET /schema/scopes: the scope vocabulary with descriptions. */
export async function fetchScopes(): Promise<{ name: string; description: string }[]> {
  const send = () =>
    fetch('/schema/scopes', { headers: { Accept: 'application/json', ...(session.accessToken ? { Authorization: `Bearer ${session.accessToken}` } : {}) } });
  let res: Response;
  try {
    res = await send();
    if (res.status === 401 && (await session.refresh())) res = await send();
  } catch {
    throw networkError();
  }
  const body = (await readJson(res)) as { scopes?: { name: string; description: string }[]; errors?: GraphQLErrorShape[] } | null;
  if (!res.ok || !body?.scopes) {
    const first = body?.errors?.[0] ?? { message: `The scope list could not be read (HTTP ${res.status}).` };
    throw describeGraphQLError(first, res.status, res.headers.get('Retry-After'));
  }
  return body.scopes;
}

/**
 * The explorer's transport: the raw GraphQL answer whatever its status (GraphiQL shows errors itself),
 * with an API key when one was pasted, else the session's token (refreshed once on a 401).
 */
export async function explorerFetch(body: unknown, extraHeaders: Record<string, string>, apiKey: string | null, signal?: AbortSignal): Promise<unknown> {
  const send = async (): Promise<Response> => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/graphql-response+json, application/json' };
    if (apiKey) headers['Authorization'] = `Bearer ${apiKey}`;
    else {
      if (session.accessToken) headers['Authorization'] = `Bearer ${session.accessToken}`;
      const tenantId = session.getSnapshot().tenantId;
      if (tenantId) headers['X-Tenant-ID'] = tenantId;
    }
    return fetch('/graphql', { method: 'POST', headers: { ...headers, ...extraHeaders }, body: JSON.stringify(body), signal: signal ?? null });
  };
  let res = await send();
  if (res.status === 401 && !apiKey && session.accessToken && (await session.refresh())) res = await send();
  const answer = await readJson(res);
  if (answer === null) return { errors: [{ message: `The server answered HTTP ${res.status} with no GraphQL body.` }] };
  return answer;
}
