import { useEffect, useState } from 'react';
import { ErrorAlert, Loading } from '../components/Notice';
import { Pager } from '../components/Pager';
import { AdminOnly, SettingsNav, useIsAdmin } from '../components/SettingsNav';
import { formatInstant, readerTimeZone, startOfDayIn, zoneLabel } from '../format';
import { useConnection, useTitle, type Connection } from '../hooks';
import { useRouter } from '../router';
import { useSession } from '../session';

const AUDIT_QUERY = `query ConsoleAuditEvents($filter: AuditEventFilter, $first: Int, $after: String) {
  auditEvents(filter: $filter, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id at type actor { kind id label } target { kind id label } clientAddress requestId summary } }
  }
}`;

interface AuditEvent {
  id: string;
  at: string;
  type: string;
  actor: { kind: 'USER' | 'API_KEY' | 'CLI' | 'ANONYMOUS'; id: string | null; label: string | null };
  target: { kind: string; id: string; label: string | null } | null;
  clientAddress: string | null;
  requestId: string | null;
  summary: string;
}
const pickEvents = (d: { auditEvents: Connection<AuditEvent> }) => d.auditEvents;

/** Every event type the API records, in words, in the groups an administrator looks for. */
const EVENT_GROUPS: { label: string; types: [string, string][] }[] = [
  {
    label: 'Sign-ins and sessions',
    types: [
      ['LOGIN_SUCCEEDED', 'Signed in'],
      ['LOGIN_FAILED', 'Sign-in failed'],
      ['LOGIN_THROTTLED', 'Sign-in throttled'],
      ['TOKEN_REFRESHED', 'Session renewed'],
      ['REFRESH_TOKEN_REUSED', 'Refresh token reused (sign-in revoked)'],
      ['LOGGED_OUT', 'Signed out'],
      ['SIGNED_OUT_EVERYWHERE', 'Signed out everywhere'],
    ],
  },
  {
    label: 'Users and passwords',
    types: [
      ['USER_ADDED', 'User added'],
      ['ROLE_CHANGED', 'Role changed'],
      ['MEMBER_REMOVED', 'User removed'],
      ['PASSWORD_CHANGED', 'Password changed'],
      ['PASSWORD_RESET_ISSUED', 'Password reset issued'],
      ['PASSWORD_RESET_COMPLETED', 'Password reset completed'],
    ],
  },
  {
    label: 'API keys',
    types: [
      ['API_KEY_CREATED', 'API key created'],
      ['API_KEY_ROTATED', 'API key rotated'],
      ['API_KEY_REVOKED', 'API key revoked'],
    ],
  },
  { label: 'Refusals', types: [['ACCESS_DENIED', 'Access denied (missing scope)']] },
];
const eventLabels = new Map(EVENT_GROUPS.flatMap((g) => g.types));
/** A whole group is chosen as `group:<label>`, one type by its name. */
function typesOf(choice: string): string[] | null {
  if (!choice) return null;
  if (choice.startsWith('group:')) return EVENT_GROUPS.find((g) => `group:${g.label}` === choice)?.types.map(([t]) => t) ?? null;
  return eventLabels.has(choice) ? [choice] : null;
}

const actorKinds: Record<AuditEvent['actor']['kind'], string> = { USER: 'User', API_KEY: 'API key', CLI: 'Command line', ANONYMOUS: 'Anonymous' };
const targetKinds: Record<string, string> = { USER: 'User', API_KEY: 'API key', OPERATION: 'Operation' };

/** The day after a YYYY-MM-DD day (for "through this day", which the API reads as "before the next"). */
function nextDay(day: string): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}
const isDay = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value));

interface Filters {
  type: string;
  actorId: string;
  actorLabel: string;
  targetId: string;
  targetLabel: string;
  from: string;
  through: string;
}
const FILTER_PARAMS: Record<keyof Filters, string> = {
  type: 'type',
  actorId: 'actor',
  actorLabel: 'actorLabel',
  targetId: 'target',
  targetLabel: 'targetLabel',
  from: 'from',
  through: 'through',
};

/** The filters live in the address, so a view of the log can be bookmarked and handed to a colleague. */
function readFilters(search: string): Filters {
  const params = new URLSearchParams(search);
  const get = (key: keyof Filters) => params.get(FILTER_PARAMS[key]) ?? '';
  const day = (key: keyof Filters) => (isDay(get(key)) ? get(key) : '');
  return {
    type: typesOf(get('type')) ? get('type') : '',
    actorId: get('actorId'),
    actorLabel: get('actorLabel'),
    targetId: get('targetId'),
    targetLabel: get('targetLabel'),
    from: day('from'),
    through: day('through'),
  };
}

function who(actor: AuditEvent['actor']): string {
  return actor.label ?? actorKinds[actor.kind];
}

export function AuditLogPage() {
  useTitle('Audit log');
  const { me } = useSession();
  const isAdmin = useIsAdmin();
  const { search } = useRouter();
  const tenantName = me?.tenants.find((t) => t.tenantId === me.tenantId)?.name ?? 'this tenant';
  const [filters, setFilters] = useState<Filters>(() => readFilters(search));
  const set = (change: Partial<Filters>) => setFilters((f) => ({ ...f, ...change }));

  useEffect(() => {
    const params = new URLSearchParams();
    for (const [key, param] of Object.entries(FILTER_PARAMS) as [keyof Filters, string][]) if (filters[key]) params.set(param, filters[key]);
    const next = params.toString();
    if (next !== window.location.search.replace(/^\?/, '')) window.history.replaceState(null, '', `/settings/audit-log${next ? `?${next}` : ''}`);
  }, [filters]);

  const filter: Record<string, unknown> = {};
  const types = typesOf(filters.type);
  if (types) filter['types'] = types;
  if (filters.actorId) filter['actorId'] = filters.actorId;
  if (filters.targetId) filter['targetId'] = filters.targetId;
  // Days are the reader's own: "from 3 March" is from midnight where they are (the zone is named beside the fields).
  if (filters.from) filter['from'] = startOfDayIn(filters.from, readerTimeZone);
  if (filters.through) filter['to'] = startOfDayIn(nextDay(filters.through), readerTimeZone);
  const backwards = filters.from && filters.through && filters.through < filters.from;
  const events = useConnection(isAdmin && !backwards ? AUDIT_QUERY : null, { filter }, pickEvents);

  if (!isAdmin) return <AdminOnly title="Audit log" what="read the audit log" />;

  const narrowed = Object.values(filters).some(Boolean);
  // The person or key, and the thing, chosen in the table: each said, and each cleared on its own.
  const narrowedTo: { label: string; clear: string; reset: Partial<Filters> }[] = [];
  const actor = filters.actorLabel || filters.actorId;
  const target = filters.targetLabel || filters.targetId;
  if (filters.actorId) narrowedTo.push({ label: `By ${actor}`, clear: `show events by anyone, not only ${actor}`, reset: { actorId: '', actorLabel: '' } });
  if (filters.targetId) {
    narrowedTo.push({ label: `About ${target}`, clear: `show events about anything, not only ${target}`, reset: { targetId: '', targetLabel: '' } });
  }
  return (
    <>
      <SettingsNav />
      <div className="page-head">
        <h1>Audit log</h1>
        <p className="subtitle">
          Security events of {tenantName}, newest first: sign-ins, sessions, users, passwords, API keys and refused requests — who, from which address, in which
          request. Times are in {zoneLabel(readerTimeZone)}.
        </p>
      </div>
      <section aria-label="Filter events" className="card">
        <form className="filters" onSubmit={(e) => e.preventDefault()}>
          <div className="field">
            <label htmlFor="audit-type">Event</label>
            <select id="audit-type" value={filters.type} onChange={(e) => set({ type: e.target.value })}>
              <option value="">Any event</option>
              {EVENT_GROUPS.map((g) => (
                <optgroup key={g.label} label={g.label}>
                  {g.types.length > 1 ? <option value={`group:${g.label}`}>All: {g.label.toLowerCase()}</option> : null}
                  {g.types.map(([type, label]) => (
                    <option key={type} value={type}>
                      {label}
                    </option>
                  ))}
                </optgroup>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="audit-from">From (day)</label>
            <input id="audit-from" type="date" value={filters.from} onChange={(e) => set({ from: e.target.value })} />
          </div>
          <div className="field">
            <label htmlFor="audit-through">Through (day)</label>
            <input id="audit-through" type="date" value={filters.through} onChange={(e) => set({ through: e.target.value })} />
          </div>
        </form>
        {narrowedTo.length > 0 ? (
          <ul className="chips" aria-label="Narrowed to">
            {narrowedTo.map((n) => (
              <li key={n.label}>
                {n.label}{' '}
                <button type="button" className="button button-small" aria-label={`Clear: ${n.clear}`} onClick={() => set(n.reset)}>
                  Clear
                </button>
              </li>
            ))}
          </ul>
        ) : null}
        {!filters.actorId && !filters.targetId ? (
          <p className="hint">To see one person&apos;s or one key&apos;s events, choose their name in the Who or About column.</p>
        ) : null}
      </section>
      <section aria-label="Events" className="card">
        {backwards ? <ErrorAlert>The Through day is before the From day: no event can be in between. Change one of them.</ErrorAlert> : null}
        <ErrorAlert onRetry={events.reload}>{events.error}</ErrorAlert>
        {events.loading && events.totalCount === null && !backwards ? <Loading what="events" /> : null}
        {events.totalCount !== null ? (
          <>
            <div className="table-wrap" tabIndex={0}>
              <table role="table" className="table table-stack table-compact audit-table">
                <caption>Audit events, newest first</caption>
                <thead role="rowgroup">
                  <tr role="row">
                    <th role="columnheader" scope="col">
                      When
                    </th>
                    <th role="columnheader" scope="col">
                      Event
                    </th>
                    <th role="columnheader" scope="col">
                      Who
                    </th>
                    <th role="columnheader" scope="col">
                      About
                    </th>
                    <th role="columnheader" scope="col">
                      What happened
                    </th>
                    <th role="columnheader" scope="col">
                      Address and request id
                    </th>
                  </tr>
                </thead>
                <tbody role="rowgroup">
                  {events.nodes.length === 0 ? (
                    <tr role="row">
                      <td role="cell" colSpan={6} className="empty">
                        {narrowed ? 'No event matches.' : 'Nothing has been recorded for this tenant yet.'}
                      </td>
                    </tr>
                  ) : (
                    events.nodes.map((e) => (
                      <tr role="row" key={e.id}>
                        <td role="cell" className="nowrap">
                          {formatInstant(e.at)}
                        </td>
                        <th role="rowheader" scope="row" className="nowrap">
                          {eventLabels.get(e.type) ?? e.type}
                        </th>
                        <td role="cell" data-label="Who">
                          {e.actor.id && e.actor.id !== filters.actorId ? (
                            <button
                              type="button"
                              className="link-button"
                              aria-label={`Only events by ${who(e.actor)}`}
                              onClick={() => set({ actorId: e.actor.id!, actorLabel: who(e.actor) })}
                            >
                              {who(e.actor)}
                            </button>
                          ) : (
                            who(e.actor)
                          )}
                          {e.actor.label ? <span className="muted"> · {actorKinds[e.actor.kind]}</span> : null}
                        </td>
                        <td role="cell" data-label="About">
                          {e.target && e.actor.id !== null && e.target.id === e.actor.id ? (
                            <span className="muted">Themselves</span>
                          ) : e.target ? (
                            <>
                              {e.target.id !== filters.targetId ? (
                                <button
                                  type="button"
                                  className="link-button"
                                  aria-label={`Only events about ${e.target.label ?? e.target.id}`}
                                  onClick={() => set({ targetId: e.target!.id, targetLabel: e.target!.label ?? e.target!.id })}
                                >
                                  {e.target.label ?? e.target.id}
                                </button>
                              ) : (
                                (e.target.label ?? e.target.id)
                              )}
                              <span className="muted"> · {targetKinds[e.target.kind] ?? e.target.kind}</span>
                            </>
                          ) : (
                            '—'
                          )}
                        </td>
                        <td role="cell" className="audit-summary">
                          {e.summary}
                        </td>
                        <td role="cell" className="mono audit-request" data-label="From">
                          {e.clientAddress ?? '—'}
                          {e.requestId ? <span className="audit-request-id">{e.requestId}</span> : null}
                        </td>
                      </tr>
                    ))
                  )}
                </tbody>
              </table>
            </div>
            <Pager
              shown={events.nodes.length}
              total={events.totalCount}
              noun="events"
              hasNextPage={events.hasNextPage}
              loading={events.loading}
              onLoadMore={events.loadMore}
            />
          </>
        ) : null}
      </section>
    </>
  );
}
