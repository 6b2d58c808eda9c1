import { useCallback, useEffect, useRef, useState } from 'react';
import { downloadText, toCsv, type CsvValue } from './csv';
import { messageOf } from './errors';
import { formatNumber } from './format';
import { graphql, hasScope, useSession } from './session';

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

/** Waits until typing pauses, so each keystroke does not become a request. */
export function useSettled<T>(value: T, ms = 250): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** Sets document.title for the page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Linepack` : 'Linepack';
  }, [title]);
}

/** One page of a Relay-style connection, as the API answers it. */
export interface Connection<TNode> {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  edges: { node: TNode }[];
}

export interface ConnectionState<TNode> {
  nodes: TNode[];
  /** How many match over all pages, as the server counts them (null before the first page). */
  totalCount: number | null;
  hasNextPage: boolean;
  loading: boolean;
  error: string | null;
  loadMore(): void;
  reload(): void;
}

/**
 * Reads a connection page by page from the server: the first page on mount (and whenever the variables or the
 * tenant change), each further page when asked. The query takes `$first` and `$after`; `pick` finds the
 * connection in its answer. Nothing is cut off on the client: every row the server counts can be reached.
 */
export function useConnection<TData, TNode>(
  query: string | null,
  variables: Record<string, unknown>,
  pick: (data: TData) => Connection<TNode> | null | undefined,
  pageSize = 50,
): ConnectionState<TNode> {
  const { tenantId } = useSession();
  const [pages, setPages] = useState<{ nodes: TNode[]; totalCount: number | null; endCursor: string | null; hasNextPage: boolean }>({
    nodes: [],
    totalCount: null,
    endCursor: null,
    hasNextPage: false,
  });
  const [loading, setLoading] = useState(query !== null);
  const [error, setError] = useState<string | null>(null);
  const [nonce, setNonce] = useState(0);
  const key = JSON.stringify(variables);
  const pickRef = useRef(pick);
  pickRef.current = pick;
  const inFlight = useRef<AbortController | null>(null);

  const fetchPage = useCallback(
    (after: string | null, replace: boolean) => {
      if (query === null) return;
      inFlight.current?.abort();
      const controller = new AbortController();
      inFlight.current = controller;
      setLoading(true);
      setError(null);
      graphql<TData>(query, { ...(JSON.parse(key) as Record<string, unknown>), first: pageSize, after }, { signal: controller.signal }).then(
        (data) => {
          if (controller.signal.aborted) return;
          const connection = pickRef.current(data);
          setPages((previous) => ({
            nodes: [...(replace ? [] : previous.nodes), ...(connection?.edges.map((e) => e.node) ?? [])],
            totalCount: connection?.totalCount ?? 0,
            endCursor: connection?.pageInfo.endCursor ?? null,
            hasNextPage: connection?.pageInfo.hasNextPage ?? false,
          }));
          setLoading(false);
        },
        (err: unknown) => {
          if (controller.signal.aborted) return;
          setError(messageOf(err));
          setLoading(false);
        },
      );
    },
    [query, key, pageSize],
  );

  useEffect(() => {
    setPages({ nodes: [], totalCount: null, endCursor: null, hasNextPage: false });
    if (query === null) {
      setLoading(false);
      return;
    }
    fetchPage(null, true);
    return () => inFlight.current?.abort();
  }, [fetchPage, query, tenantId, nonce]);

  const loadMore = useCallback(() => {
    if (pages.hasNextPage && !loading) fetchPage(pages.endCursor, false);
  }, [fetchPage, pages.hasNextPage, pages.endCursor, loading]);
  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { nodes: pages.nodes, totalCount: pages.totalCount, hasNextPage: pages.hasNextPage, loading, error, loadMore, reload };
}

/**
 * Every page of a connection, read one after another (for a CSV export or a plot that needs the whole run);
 * `onProgress` hears how many rows have arrived of how many.
 */
export async function readAllPages<TData, TNode>(
  query: string,
  variables: Record<string, unknown>,
  pick: (data: TData) => Connection<TNode> | null | undefined,
  options: { signal?: AbortSignal; onProgress?: (loaded: number, total: number) => void; pageSize?: number } = {},
): Promise<{ nodes: TNode[]; totalCount: number }> {
  const nodes: TNode[] = [];
  let after: string | null = null;
  let totalCount = 0;
  for (;;) {
    const data: TData = await graphql<TData>(query, { ...variables, first: options.pageSize ?? 500, after }, { signal: options.signal });
    const connection = pick(data);
    if (!connection) break;
    totalCount = connection.totalCount;
    nodes.push(...connection.edges.map((e) => e.node));
    options.onProgress?.(nodes.length, totalCount);
    if (!connection.pageInfo.hasNextPage || connection.pageInfo.endCursor === null) break;
    after = connection.pageInfo.endCursor;
  }
  return { nodes, totalCount };
}

const TIME_ZONE_QUERY = 'query ConsoleTimeZone { complianceSettings { timeZone } }';
/** Zones read so far, by tenant: a page opened after the first shows its dates at once. */
const knownZones = new Map<string, string>();
const pendingZones = new Map<string, Promise<string>>();

/**
 * The tenant's IANA time zone (complianceSettings.timeZone): repair and compliance days are counted in it, so the
 * console shows those dates in it too, whatever zone the reader's browser is in. Undefined while it is being read:
 * a page shows no date (and takes none) until it is known, since a day in the wrong zone is a different day. Null
 * without compliance:read or when it could not be read (the page then says dates are in UTC); a failed read is tried
 * again on the next page.
 */
export function useTenantTimeZone(): string | null | undefined {
  const { tenantId, me } = useSession();
  const allowed = hasScope(me, 'compliance:read');
  const [, setRead] = useState(0);
  const [failedFor, setFailedFor] = useState<string | null>(null);
  const needed = tenantId !== null && allowed && !knownZones.has(tenantId);
  useEffect(() => {
    if (!needed || !tenantId) return;
    let live = true;
    let pending = pendingZones.get(tenantId);
    if (!pending) {
      pending = graphql<{ complianceSettings: { timeZone: string } }>(TIME_ZONE_QUERY).then(
        (d) => (knownZones.set(tenantId, d.complianceSettings.timeZone), d.complianceSettings.timeZone),
        (err: unknown) => {
          pendingZones.delete(tenantId);
          throw err;
        },
      );
      pendingZones.set(tenantId, pending);
    }
    pending.then(
      () => live && setRead((n) => n + 1),
      () => live && setFailedFor(tenantId),
    );
    return () => {
      live = false;
    };
  }, [needed, tenantId]);
  if (!tenantId || !allowed) return null;
  return knownZones.get(tenantId) ?? (failedFor === tenantId ? null : undefined);
}

/**
 * A page's filters kept in its address (`path?name=value` for each non-empty value), so a view can be bookmarked and
 * shared. Only the address changes: a router navigation would move focus to the page, out of the field being used.
 */
export function useFiltersInAddress(path: string, values: Record<string, string>): void {
  const key = JSON.stringify(values);
  useEffect(() => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(JSON.parse(key) as Record<string, string>)) if (value) params.set(name, value);
    const next = params.toString();
    if (next !== window.location.search.replace(/^\?/, '')) window.history.replaceState(null, '', `${path}${next ? `?${next}` : ''}`);
  }, [path, key]);
}

export interface CsvExport<TData, TNode> {
  /** "Reading the risk register: 500 of 1,200…" while it runs; null otherwise. */
  progress: string | null;
  error: string | null;
  /** Reads every page of the connection, then downloads the rows as one CSV file. */
  run(options: {
    query: string;
    variables: Record<string, unknown>;
    pick: (data: TData) => Connection<TNode> | null | undefined;
    fileName: string;
    header: readonly string[];
    rows: (nodes: TNode[]) => CsvValue[][];
  }): void;
}

/** An "Export CSV" button's work: every matching row from the server (never only the rows on screen), its progress said. */
export function useCsvExport<TData, TNode>(what: string): CsvExport<TData, TNode> {
  const [progress, setProgress] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback<CsvExport<TData, TNode>['run']>(
    ({ query, variables, pick, fileName, header, rows }) => {
      setProgress(`Reading ${what}…`);
      setError(null);
      readAllPages<TData, TNode>(query, variables, pick, {
        onProgress: (loaded, total) => setProgress(`Reading ${what}: ${formatNumber(loaded)} of ${formatNumber(total)}…`),
      }).then(
        ({ nodes }) => {
          downloadText(fileName, toCsv(header, rows(nodes)));
          setProgress(null);
        },
        (err: unknown) => {
          setProgress(null);
          setError(`The export failed. ${messageOf(err)}`);
        },
      );
    },
    [what],
  );
  return { progress, error, run };
}
