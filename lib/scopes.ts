/**
 * The scope vocabulary. Every place that reads a scope — SDL checks at the
 * gateway and in subgraphs, introspection output, the CLI, role mapping — goes through
 * normalizeScopes so the two spellings seen in the wild mean the same thing.
 */
import { scopeDeclarations } from './generated/scopes';

/** Every scope with what it grants, generated from the @scope declarations in the SDL. */
export { scopeDeclarations };

export type Scope = (typeof scopeDeclarations)[number]['name'];

export const canonicalScopes: readonly Scope[] = scopeDeclarations.map((s) => s.name);

export const ADMIN_SCOPE = 'admin:*' satisfies Scope;

/**
 * The other spelling seen in the wild, derived rather than listed so a scope added in an SDL gets its
 * alias too: `read:assets` → `assets:read`, `write:assets` → `assets:write`, `admin` → `admin:*`.
 */
export function scopeAlias(scope: Scope): string {
  if (scope === ADMIN_SCOPE) return 'admin';
  const [resource, action] = scope.split(':');
  return `${action}:${resource}`;
}

const aliases: ReadonlyMap<string, Scope> = new Map(canonicalScopes.map((s) => [scopeAlias(s), s]));

const canonicalSet: ReadonlySet<string> = new Set(canonicalScopes);

/** The canonical spelling of a scope, or null when it is not a scope Linepack knows. */
export function canonicalScope(raw: string): Scope | null {
  const trimmed = raw.trim();
  if (canonicalSet.has(trimmed)) return trimmed as Scope;
  return aliases.get(trimmed) ?? null;
}

export class UnknownScopeError extends Error {
  constructor(readonly unknown: string[]) {
    super(
      `unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.map((s) => `"${s}"`).join(', ')}; ` +
        `known scopes: ${canonicalScopes.join(' ')} (aliases such as read:assets are accepted)`,
    );
  }
}

/** Canonical, de-duplicated, sorted scopes. Unknown scopes are an error: a typo must not silently grant less. */
export function normalizeScopes(raw: Iterable<string>): Scope[] {
  const out = new Set<Scope>();
  const unknown: string[] = [];
  for (const r of raw) {
    const c = canonicalScope(r);
    if (c) out.add(c);
    else unknown.push(r);
  }
  if (unknown.length > 0) throw new UnknownScopeError(unknown);
  return [...out].sort();
}

/** Lenient form for scopes read from stored credentials or tokens: unknown entries are dropped. */
export function knownScopes(raw: Iterable<string>): Scope[] {
  const out = new Set<Scope>();
  for (const r of raw) {
    const c = canonicalScope(r);
    if (c) out.add(c);
  }
  return [...out].sort();
}

/** Splits "a,b c" (CLI and env input) into scope strings. */
export function parseScopeList(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

export function grants(granted: readonly string[], required: string): boolean {
  if (granted.includes(ADMIN_SCOPE)) return true;
  const c = canonicalScope(required);
  return c !== null && granted.includes(c);
}

/**
 * @requiresScopes semantics: the outer list is OR, each inner list is AND.
 * Returns null when satisfied, otherwise the missing scopes of the alternative closest to being met.
 */
export function missingScopes(granted: readonly string[], requirement: readonly (readonly string[])[]): string[] | null {
  if (requirement.length === 0 || granted.includes(ADMIN_SCOPE)) return null;
  let best: string[] | null = null;
  for (const alternative of requirement) {
    const missing = alternative.filter((s) => !grants(granted, s)).map((s) => canonicalScope(s) ?? s);
    if (missing.length === 0) return null;
    if (best === null || missing.length < best.length) best = missing;
  }
  return best;
}

export const roles = ['VIEWER', 'ENGINEER', 'ADMIN'] as const;
export type Role = (typeof roles)[number];

/**
 * Roles map to scopes by rule, so a scope added in an SDL reaches the roles without editing this
 * file: VIEWER reads everything, ENGINEER also writes, ADMIN holds admin:* (the identity team owns
 * this rule; see CODEOWNERS).
 */
const readScopes = canonicalScopes.filter((s) => s.endsWith(':read'));
const writeScopes = canonicalScopes.filter((s) => s.endsWith(':write'));

export const scopesByRole: Readonly<Record<Role, readonly Scope[]>> = {
  VIEWER: readScopes,
  ENGINEER: [...readScopes, ...writeScopes].sort(),
  ADMIN: [ADMIN_SCOPE],
};
