import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { parse } from 'graphql';
import { requestError } from '../errors';
import type { Logger } from '../logger';
import { authorizeOperation, securityMapFromSdl } from './security-directives';

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
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, contextValue }) {
          if (!operation) return;
          const result = authorizeOperation(schema, document, operation, security, scopesOf(contextValue));
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
