import type { ApolloServerPlugin } from '@apollo/server';
import { parse } from 'graphql';
import { authorizeOperation, securityMapFromSdl } from '../../lib/authz/security-directives';
import { requestError } from '../../lib/errors';
import type { GatewayContext } from './context';

/**
 * Enforces the @requiresScopes declared in the subgraph SDLs (as composed into the supergraph)
 * before anything executes: a missing scope answers 403 naming it, and no subgraph is called.
 */
export function scopeEnforcementPlugin(supergraphSdl: string): ApolloServerPlugin<GatewayContext> {
  const security = securityMapFromSdl(parse(supergraphSdl));
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, contextValue }) {
          if (!operation) return;
          const result = authorizeOperation(schema, document, operation, security, contextValue.credential.scopes);
          if (result.missingScopes.length > 0) {
            contextValue.logger.info({ deniedFields: result.deniedFields, missingScopes: result.missingScopes }, 'operation refused: missing scope');
            throw requestError(
              'FORBIDDEN',
              `missing scope${result.missingScopes.length > 1 ? 's' : ''} ${result.missingScopes.join(', ')} (needed for ${result.deniedFields.join(', ')})`,
              { missingScopes: result.missingScopes },
            );
          }
        },
      };
    },
  };
}
