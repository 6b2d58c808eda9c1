import { useCallback, useEffect, useRef, useState } from 'react';
import { messageOf } from './errors';
import { graphql, useSession } from './session';

export interface QueryState<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/** Runs a GraphQL query on mount, when its variables change, and when the tenant changes. */
export function useQuery<T>(query: string | null, variables: Record<string, unknown> = {}): QueryState<T> {
  const { tenantId } = useSession();
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({ data: null, error: null, loading: query !== null });
  const [nonce, setNonce] = useState(0);
  const key = JSON.stringify(variables);
  const variablesRef = useRef(variables);
  variablesRef.current = variables;

  useEffect(() => {
    if (query === null) {
      setState({ data: null, error: null, loading: false });
      return;
    }
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true, error: null }));
    graphql<T>(query, variablesRef.current, { signal: controller.signal }).then(
      (data) => {
        if (!controller.signal.aborted) setState({ data, error: null, loading: false });
      },
      (err: unknown) => {
        if (!controller.signal.aborted) setState({ data: null, error: messageOf(err), loading: false });
      },
    );
    return () => controller.abort();
  }, [query, key, tenantId, nonce]);

  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { ...state, reload };
}

/** Sets document.title for the page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Linepack` : 'Linepack';
  }, [title]);
}
