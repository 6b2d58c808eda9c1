import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { parse, type DocumentNode } from 'graphql';
import { requestError } from '../errors';
import type { Logger } from '../logger';
import { authorizeRequirements, operationRequirements, securityMapFromSdl, type OperationRequirements } from './security-directives';

/**
 * Enforces the @requiresScopes / @authenticated an SDL declares before anything executes: a missing
 * scope answers 403 naming it. The gateway runs it against the supergraph (so no subgraph is called);
 * each subgraph runs it again against its own SDL and the identity the gateway vouched for.
 */
export function scopeEnforcementPlugin<C extends BaseContext & { logger: Logger }>(
  sdl: string,
  scopesOf: (context: C) => readonly string[],
  /** Told about every refusal (the gateway records it in the tenant's audit log). */
  onDenied?: (context: C, denial: { operationName: string | null; missingScopes: string[]; deniedFields: string[] }) => void,
): ApolloServerPlugin<C> {
  const security = securityMapFromSdl(parse(sdl));
  // Apollo Server keeps one parsed DocumentNode per query text (its document store), so a repeated query walks the
  // schema once: afterwards only its requirements are checked against the caller's scopes. Weakly held, so the
  // cache lives exactly as long as Apollo's; keyed by operation within the document (a document may hold several).
  const analysed = new WeakMap<DocumentNode, Map<string, OperationRequirements>>();
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, contextValue }) {
          if (!operation) return;
          let perOperation = analysed.get(document);
          if (!perOperation) analysed.set(document, (perOperation = new Map()));
          const operationKey = operation.name?.value ?? '';
          let requirements = perOperation.get(operationKey);
          if (!requirements) perOperation.set(operationKey, (requirements = operationRequirements(schema, document, operation, security)));
          const result = authorizeRequirements(requirements, scopesOf(contextValue));
          if (result.missingScopes.length === 0) return;
          contextValue.logger.info({ deniedFields: result.deniedFields, missingScopes: result.missingScopes }, 'operation refused: missing scope');
          onDenied?.(contextValue, { operationName: operation.name?.value ?? null, missingScopes: result.missingScopes, deniedFields: result.deniedFields });
          throw requestError(
            'FORBIDDEN',
            `missing scope${result.missingScopes.length > 1 ? 's' : ''} ${result.missingScopes.join(', ')} (needed for ${result.deniedFields.join(', ')})`,
            { missingScopes: result.missingScopes },
          );
        },
      };
    },
  };
}
