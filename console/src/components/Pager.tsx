import { formatNumber } from '../format';

/**
 * "N of M" under a list the server pages, and the button that reads the next page: every row the server counts
 * can be reached, none is cut off silently.
 */
export function Pager({
  shown,
  total,
  noun,
  hasNextPage,
  loading,
  onLoadMore,
}: {
  shown: number;
  total: number | null;
  noun: string;
  hasNextPage: boolean;
  loading: boolean;
  onLoadMore(): void;
}) {
  if (total === null) return null;
  return (
    <div className="pager">
      <p className="table-note" role="status" aria-live="polite">
        {formatNumber(shown)} of {formatNumber(total)} {noun}
      </p>
      {hasNextPage ? (
        <button type="button" className="button button-small" disabled={loading} onClick={onLoadMore}>
          {loading ? 'Loading…' : 'Load more'}
        </button>
      ) : null}
    </div>
  );
}
