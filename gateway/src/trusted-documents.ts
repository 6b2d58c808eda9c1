import { createHash } from 'node:crypto';
import type { ApolloServerPlugin } from '@apollo/server';
import type { NextFunction, Request, Response } from 'express';
import { GraphQLError, Kind, print, visit, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { LRUCache } from 'lru-cache';
import { UNREGISTERED_OPERATION } from '@linepack/lib/metrics';
import { trustedDocuments as committedManifest, type TrustedDocuments } from '@linepack/lib/generated/trusted-documents';

/**
 * Trusted documents (persisted operations): the operations the project's own clients send — the console, the MCP
 * companion, the CLI and the README's examples — collected at build time into lib/generated/trusted-documents.ts
 * (`npm run trusted-documents`; `trusted-documents:check` fails when it is stale).
 *
 * A document is identified by the SHA-256 of its canonical text: the chosen operation and the fragments it uses
 * (sorted by name), printed by graphql-js. Whitespace, comments, other operations in the same document and unused
 * fragments do not change it, so a client's literal and the manifest agree however the client formats it.
 *
 * What it does: the metrics label an operation by its name only when its document is trusted, `unregistered`
 * otherwise (lib/metrics.ts), and with TRUSTED_DOCUMENTS_ONLY the gateway runs trusted documents only, as Apollo
 * Router's and Hive Gateway's persisted-document safelisting: a client may send the id instead of the text
 * (`documentId`, or APQ's `extensions.persistedQuery.sha256Hash`); an unknown id is PERSISTED_QUERY_NOT_FOUND and an
 * untrusted document PERSISTED_QUERY_NOT_IN_LIST, both 400.
 */

/** The operation `operationName` picks in `document` (the only one when unnamed), or null when none is chosen. */
function chosenOperation(document: DocumentNode, operationName: string | null): OperationDefinitionNode | null {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operationName) return operations.find((op) => op.name?.value === operationName) ?? null;
  return operations.length === 1 ? operations[0]! : null;
}

function usedFragments(document: DocumentNode, operation: OperationDefinitionNode): FragmentDefinitionNode[] {
  const all = new Map(document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
  const used = new Map<string, FragmentDefinitionNode>();
  const follow = (node: OperationDefinitionNode | FragmentDefinitionNode) =>
    visit(node, {
      FragmentSpread(spread) {
        const fragment = all.get(spread.name.value);
        if (fragment && !used.has(fragment.name.value)) {
          used.set(fragment.name.value, fragment);
          follow(fragment);
        }
      },
    });
  follow(operation);
  return [...used.values()].sort((a, b) => a.name.value.localeCompare(b.name.value));
}

/** The canonical text of the operation a request runs, and its name; null when the document names no single operation. */
export function canonicalDocument(document: DocumentNode, operationName: string | null): { text: string; name: string | null } | null {
  const operation = chosenOperation(document, operationName);
  if (!operation) return null;
  const text = print({ kind: Kind.DOCUMENT, definitions: [operation, ...usedFragments(document, operation)] });
  return { text, name: operation.name?.value ?? null };
}

export function documentIdOf(canonicalText: string): string {
  return createHash('sha256').update(canonicalText).digest('hex');
}

export interface TrustedDocumentsOptions {
  /** TRUSTED_DOCUMENTS_ONLY: run trusted documents only. */
  enforce: boolean;
  /** The committed manifest unless a test gives its own. */
  manifest?: TrustedDocuments;
}

/** A 400 that says what to do, with the code Apollo Router uses for the same refusal. */
function refusal(code: 'PERSISTED_QUERY_NOT_FOUND' | 'PERSISTED_QUERY_NOT_IN_LIST', message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code, http: { status: 400 } } });
}

export class TrustedDocumentList {
  private readonly manifest: TrustedDocuments;
  /** Printing and hashing a document costs about a parse: each distinct request text is judged once. */
  private readonly judged = new LRUCache<string, string>({ max: 5_000 });

  constructor(private readonly options: TrustedDocumentsOptions) {
    this.manifest = options.manifest ?? committedManifest;
  }

  /** The metrics label of a request's operation: its name when its document is trusted, else `unregistered`. */
  labelOf(document: DocumentNode, operationName: string | null, source: string): string {
    const key = `${operationName ?? ''}\u0000${source}`;
    let label = this.judged.get(key);
    if (label === undefined) {
      const canonical = canonicalDocument(document, operationName);
      const trusted = canonical ? this.manifest[documentIdOf(canonical.text)] : undefined;
      label = trusted ? (trusted.name ?? 'anonymous') : UNREGISTERED_OPERATION;
      this.judged.set(key, label);
    }
    return label;
  }

  /**
   * Before the GraphQL server reads the body: a request that names a trusted document by id gets its text. A
   * `documentId` ("sha256:<hex>" or the bare hex) is answered whatever the mode; an APQ hash without a query is left
   * to Apollo Server's own APQ unless enforcing (then only trusted ids run).
   */
  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const body = req.body as { query?: unknown; documentId?: unknown; extensions?: { persistedQuery?: { sha256Hash?: unknown } } } | undefined;
      if (!body || typeof body !== 'object' || typeof body.query === 'string') return next();
      const documentId = typeof body.documentId === 'string' ? body.documentId.replace(/^sha256:/, '') : undefined;
      const apqHash = body.extensions?.persistedQuery?.sha256Hash;
      const id = documentId ?? (typeof apqHash === 'string' ? apqHash : undefined);
      if (id === undefined) return next();
      const trusted = this.manifest[id.toLowerCase()];
      if (trusted) {
        body.query = trusted.document;
        delete body.documentId;
        return next();
      }
      if (documentId === undefined && !this.options.enforce) return next();
      res.status(400).json({
        errors: [{ message: `no trusted document has the id ${JSON.stringify(id.slice(0, 80))}`, extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }],
      });
    };
  }

  /** With TRUSTED_DOCUMENTS_ONLY: an untrusted document is refused before it runs. */
  enforcementPlugin<C extends object>(): ApolloServerPlugin<C> {
    return {
      requestDidStart: async () => ({
        didResolveOperation: async ({ document, operationName, source }) => {
          if (!this.options.enforce || this.labelOf(document, operationName ?? null, source) !== UNREGISTERED_OPERATION) return;
          throw refusal(
            'PERSISTED_QUERY_NOT_IN_LIST',
            'this gateway runs trusted documents only (TRUSTED_DOCUMENTS_ONLY) and this operation is not one of them: send a trusted documentId or its exact operation',
          );
        },
      }),
    };
  }
}
