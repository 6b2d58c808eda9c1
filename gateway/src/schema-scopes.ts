import { parse } from 'graphql';
import { securityMapFromSdl } from '@linepack/lib/authz/security-directives';
import { scopeDeclarations } from '@linepack/lib/scopes';

/** `GET /schema/scopes`: the scope vocabulary and what each field or type of the API demands. */
export interface ScopeRequirementsDocument {
  scopes: { name: string; description: string }[];
  /** "Type.field" or "Type" → alternatives (OR) of scope sets (AND), as @requiresScopes writes them. */
  requirements: Record<string, string[][]>;
}

/**
 * Introspection carries no directives, so a client that helps people write operations (linepack-mcp's
 * search_schema and describe_type) cannot see which scope a field needs; this is the same map the
 * gateway enforces, read from the supergraph once at start-up.
 */
export function scopeRequirementsDocument(supergraphSdl: string): ScopeRequirementsDocument {
  const requirements: Record<string, string[][]> = {};
  for (const [coordinate, requirement] of securityMapFromSdl(parse(supergraphSdl))) requirements[coordinate] = requirement.scopes;
  return { scopes: scopeDeclarations.map(({ name, description }) => ({ name, description })), requirements };
}
