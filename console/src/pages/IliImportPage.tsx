import { useEffect, useState, type FormEvent } from 'react';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { InTenantZone } from '../components/TenantZone';
import { messageOf } from '../errors';
import { formatNumber, humanize, isoDayIn, startOfDayIn, zoneLabel } from '../format';
import { useQuery, useTitle } from '../hooks';
import { Link } from '../router';
import { graphql, hasScope, useSession } from '../session';

/** The API takes a part of at most 4 MiB of bytes (appendIliUploadPart's limit, MAX_BASE64_BYTES in lib/scalars.ts). */
const PART_BYTES = 4 * 1024 * 1024;
const TOOL_TECHNOLOGIES = ['MFL', 'TFI', 'UT', 'UTCD', 'EMAT', 'CALIPER', 'IMU'] as const;
const POLL_MS = 500;
/** The profile's canonical fields (MAPPED_FIELDS in lib/ili/listing.ts) in words. */
const FIELD_LABELS: Record<string, string> = {
  logDistance: 'Log distance',
  eventType: 'Feature type',
  eventIdentification: 'Feature identification',
  vendorFeatureId: 'Vendor feature id',
  jointNumber: 'Joint number',
  jointLength: 'Joint length',
  wallThickness: 'Wall thickness',
  clock: 'Clock position',
  depth: 'Depth',
  length: 'Length',
  width: 'Width',
  dentDepth: 'Dent depth',
  surface: 'Surface',
  markerName: 'Marker name',
  comment: 'Comment',
};

const PAGE_QUERY = `query ConsoleIliImportPage($id: ID!) {
  asset(id: $id) { id name type }
  iliMappingProfiles { id name vendor }
}`;
interface PageData {
  asset: { id: string; name: string; type: string } | null;
  iliMappingProfiles: { id: string; name: string; vendor: string | null }[];
}

const PREVIEW_QUERY = `query ConsoleIliUploadPreview($upload: ID!, $profile: ID, $asset: ID) {
  iliUploadPreview(uploadId: $upload, profileId: $profile, assetId: $asset, rows: 20) {
    columns { field column found }
    missingColumns
    problem
    rows { rowNumber kind logDistanceM jointNumber clockDeg depthPctWt lengthMm widthMm dentDepthPctOd }
    rejected { rowNumber column rule value }
  }
}`;
interface RowError {
  rowNumber: number;
  column: string | null;
  rule: string;
  value: string | null;
}
interface Preview {
  columns: { field: string; column: string; found: boolean }[];
  missingColumns: string[];
  problem: string | null;
  rows: {
    rowNumber: number;
    kind: string;
    logDistanceM: number;
    jointNumber: number | null;
    clockDeg: number | null;
    depthPctWt: number | null;
    lengthMm: number | null;
    widthMm: number | null;
    dentDepthPctOd: number | null;
  }[];
  rejected: RowError[];
}

/** What is polled while the job runs; the counts and rejected rows are read once, when it has finished. */
const STATUS_FIELDS = 'id state failure errorCount progress { done total phase }';
const STATUS_QUERY = `query ConsoleIliImportStatus($id: ID!) { iliImport(id: $id) { ${STATUS_FIELDS} } }`;
const IMPORT_QUERY = `query ConsoleIliImport($id: ID!) { iliImport(id: $id) { ${STATUS_FIELDS}
    counts { rows features tallyItems rejectedRows }
    errors(first: 1000) { rowNumber column rule value } } }`;
interface ImportStatus {
  id: string;
  state: string;
  failure: string | null;
  errorCount: number;
  progress: { done: number; total: number | null; phase: string };
}
interface ImportJob extends ImportStatus {
  counts: { rows: number; features: number; tallyItems: number; rejectedRows: number };
  errors: RowError[];
}
const hasFinished = (job: ImportStatus) => job.state === 'SUCCEEDED' || job.state === 'FAILED';
const isReport = (job: ImportStatus | ImportJob): job is ImportJob => 'counts' in job;

/** A finished job with its counts and rejected rows (read once); a running one as it is. */
async function settled(job: ImportStatus): Promise<ImportStatus | ImportJob | null> {
  if (!hasFinished(job)) return job;
  return (await graphql<{ iliImport: ImportJob | null }>(IMPORT_QUERY, { id: job.id })).iliImport;
}

type Step =
  | { name: 'form' }
  | { name: 'uploading'; sent: number; total: number }
  | { name: 'preview'; uploadId: string; preview: Preview }
  | { name: 'importing'; job: ImportStatus | ImportJob | null };

const hex = (buffer: ArrayBuffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');

function base64Of(bytes: Uint8Array): string {
  // btoa takes a binary string; built in slices so that a 4 MiB part does not overflow the argument list.
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Today as yyyy-mm-dd for the date inputs' upper bound (a run date is never in the future). */

function RowErrorsTable({ errors, caption }: { errors: RowError[]; caption: string }) {
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="table table-compact">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Row</th>
            <th scope="col">Column</th>
            <th scope="col">Rule</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {errors.map((e, i) => (
            <tr key={`${e.rowNumber}-${e.column ?? ''}-${i}`}>
              <td className="num">{e.rowNumber}</td>
              <td>{e.column ?? '—'}</td>
              <td>{e.rule}</td>
              <td className="mono">{e.value ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function PreviewView({ preview }: { preview: Preview }) {
  return (
    <>
      {preview.problem ? <ErrorAlert>The file cannot be imported with this profile: {preview.problem}.</ErrorAlert> : null}
      <div className="table-wrap" tabIndex={0}>
        <table className="table table-compact">
          <caption>Mapped columns</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Column in the file</th>
              <th scope="col">Found</th>
            </tr>
          </thead>
          <tbody>
            {preview.columns.map((c) => (
              <tr key={c.field}>
                <td>{FIELD_LABELS[c.field] ?? c.field}</td>
                <td>{c.column}</td>
                <td>{c.found ? 'Yes' : <strong>Missing</strong>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {preview.rows.length > 0 ? (
        <div className="table-wrap" tabIndex={0}>
          <table className="table table-compact">
            <caption>First rows as they will be read</caption>
            <thead>
              <tr>
                <th scope="col">Row</th>
                <th scope="col">Kind</th>
                <th scope="col">Log distance (m)</th>
                <th scope="col">Joint</th>
                <th scope="col">Depth (% WT)</th>
                <th scope="col">Length (mm)</th>
                <th scope="col">Width (mm)</th>
                <th scope="col">Clock (°)</th>
              </tr>
            </thead>
            <tbody>
              {preview.rows.map((r) => (
                <tr key={r.rowNumber}>
                  <td className="num">{r.rowNumber}</td>
                  <td>{humanize(r.kind)}</td>
                  <td className="num">{formatNumber(r.logDistanceM, 2)}</td>
                  <td className="num">{r.jointNumber ?? '—'}</td>
                  <td className="num">
                    {r.depthPctWt === null ? (r.dentDepthPctOd === null ? '—' : `${formatNumber(r.dentDepthPctOd, 1)} % OD`) : formatNumber(r.depthPctWt, 1)}
                  </td>
                  <td className="num">{r.lengthMm === null ? '—' : formatNumber(r.lengthMm, 0)}</td>
                  <td className="num">{r.widthMm === null ? '—' : formatNumber(r.widthMm, 0)}</td>
                  <td className="num">{r.clockDeg === null ? '—' : formatNumber(r.clockDeg, 0)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {preview.rejected.length > 0 ? <RowErrorsTable errors={preview.rejected} caption="Problems in the first rows (the import will refuse the file)" /> : null}
    </>
  );
}

function ImportReport({ job, assetId }: { job: ImportJob; assetId: string }) {
  if (job.state === 'SUCCEEDED') {
    return (
      <section aria-labelledby="report-heading" className="card">
        <h2 id="report-heading">Imported</h2>
        <Status tone="success">
          {formatNumber(job.counts.rows)} rows read: {formatNumber(job.counts.features)} features and {formatNumber(job.counts.tallyItems)} tally items stored.
        </Status>
        <p>
          <Link to={`/assets/${encodeURIComponent(assetId)}#along-heading`}>See the run along the line</Link>
        </p>
      </section>
    );
  }
  return (
    <section aria-labelledby="report-heading" className="card">
      <h2 id="report-heading">Not imported</h2>
      {/* A FAILED import stored nothing: rows are checked before any is written, and a failure while writing is retried. */}
      <ErrorAlert>{/nothing was stored/i.test(job.failure ?? '') ? job.failure : `${job.failure ?? 'The import failed'}. Nothing was stored.`}</ErrorAlert>
      {job.errors.length > 0 ? (
        <RowErrorsTable
          errors={job.errors}
          caption={`${formatNumber(job.errorCount)} rejected ${job.errorCount === 1 ? 'value' : 'values'}${job.errors.length < job.errorCount ? ` (the first ${formatNumber(job.errors.length)} shown)` : ''}`}
        />
      ) : null}
    </section>
  );
}

export function IliImportPage({ assetId }: { assetId: string }) {
  return <InTenantZone>{(zone) => <IliImport assetId={assetId} zone={zone} />}</InTenantZone>;
}

/** Imports a vendor's ILI listing into a pipeline or segment: upload in parts → mapping preview → progress → report. */
function IliImport({ assetId, zone }: { assetId: string; zone: string | null }) {
  const { me } = useSession();
  const { data, error, loading, reload } = useQuery<PageData>(PAGE_QUERY, { id: assetId });
  const [file, setFile] = useState<File | null>(null);
  const [vendor, setVendor] = useState('');
  const [tools, setTools] = useState<Set<string>>(new Set(['MFL']));
  const [runDate, setRunDate] = useState('');
  const [discoveredAt, setDiscoveredAt] = useState('');
  const [chosenProfileId, setProfileId] = useState<string | null>(null);
  const [step, setStep] = useState<Step>({ name: 'form' });
  const [failure, setFailure] = useState<string | null>(null);
  const asset = data?.asset;
  // The run and discovery dates are days of the tenant's zone, where repair due dates are counted from them.
  const today = () => isoDayIn(new Date().toISOString(), zone);
  useTitle(asset ? `Import ILI listing · ${asset.name}` : 'Import ILI listing');

  const importId = step.name === 'importing' ? step.job?.id : undefined;
  const job = step.name === 'importing' ? step.job : null;
  const finished = job !== null && hasFinished(job);
  const report = job !== null && isReport(job) ? job : null;
  useEffect(() => {
    if (!importId || finished) return;
    // The job runs on the server; its progress is read until it has SUCCEEDED or FAILED.
    const timer = window.setTimeout(() => {
      graphql<{ iliImport: ImportStatus | null }>(STATUS_QUERY, { id: importId })
        .then((answer) => answer.iliImport && settled(answer.iliImport))
        .then(
          (now) => now && setStep({ name: 'importing', job: now }),
          (err: unknown) => setFailure(messageOf(err)),
        );
    }, POLL_MS);
    return () => window.clearTimeout(timer);
  }, [importId, finished, step]);

  if (loading && !data) return <Loading what="the asset" />;
  if (error) {
    return (
      <>
        <h1>Import ILI listing</h1>
        <ErrorAlert onRetry={reload}>{error}</ErrorAlert>
      </>
    );
  }
  if (!asset) {
    return (
      <>
        <h1>Asset not found</h1>
        <Status>
          There is no asset with this id in this tenant. <Link to="/assets">Back to the assets</Link>
        </Status>
      </>
    );
  }
  const allowed = hasScope(me, 'measurements:write');
  // The built-in POF profile comes first in the list: the default until another is chosen.
  const profileId = chosenProfileId ?? data.iliMappingProfiles[0]?.id ?? null;

  async function uploadAndPreview(event: FormEvent) {
    event.preventDefault();
    setFailure(null);
    if (!file) return setFailure('Choose the listing file (CSV or XLSX).');
    if (!vendor.trim()) return setFailure('Name the vendor.');
    if (tools.size === 0) return setFailure('Choose at least one tool technology.');
    if (!runDate) return setFailure('Give the run date.');
    try {
      setStep({ name: 'uploading', sent: 0, total: file.size });
      const bytes = new Uint8Array(await file.arrayBuffer());
      const sha256 = hex(await crypto.subtle.digest('SHA-256', bytes));
      const created = await graphql<{ createIliUpload: { id: string } }>(
        'mutation ConsoleCreateIliUpload($i: CreateIliUploadInput!) { createIliUpload(input: $i) { id } }',
        {
          i: { fileName: file.name, format: /\.xlsx$/i.test(file.name) ? 'XLSX' : 'CSV', sizeBytes: file.size, sha256 },
        },
      );
      const uploadId = created.createIliUpload.id;
      for (let index = 0, offset = 0; offset < bytes.length; index++, offset += PART_BYTES) {
        const part = bytes.subarray(offset, offset + PART_BYTES);
        await graphql(
          'mutation ConsoleAppendIliUploadPart($u: ID!, $n: Int!, $d: Base64!) { appendIliUploadPart(uploadId: $u, index: $n, data: $d) { receivedBytes } }',
          {
            u: uploadId,
            n: index,
            d: base64Of(part),
          },
        );
        setStep({ name: 'uploading', sent: offset + part.length, total: bytes.length });
      }
      const answer = await graphql<{ iliUploadPreview: Preview }>(PREVIEW_QUERY, { upload: uploadId, profile: profileId, asset: assetId });
      setStep({ name: 'preview', uploadId, preview: answer.iliUploadPreview });
    } catch (err) {
      setFailure(messageOf(err));
      setStep({ name: 'form' });
    }
  }

  async function startImport(uploadId: string) {
    setFailure(null);
    try {
      const started = await graphql<{ startIliImport: ImportStatus }>(
        `mutation ConsoleStartIliImport($i: StartIliImportInput!) { startIliImport(input: $i) { ${STATUS_FIELDS} } }`,
        {
          i: {
            uploadId,
            assetId,
            profileId,
            run: {
              vendor: vendor.trim(),
              toolTechnologies: [...tools],
              runDate: startOfDayIn(runDate, zone),
              discoveredAt: discoveredAt ? startOfDayIn(discoveredAt, zone) : null,
            },
          },
        },
      );
      setStep({ name: 'importing', job: await settled(started.startIliImport) });
    } catch (err) {
      setFailure(messageOf(err));
    }
  }

  const formDisabled = step.name !== 'form';
  return (
    <>
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <ol>
          <li>
            <Link to="/assets">Assets</Link>
          </li>
          <li>
            <Link to={`/assets/${encodeURIComponent(asset.id)}`}>{asset.name}</Link>
          </li>
          <li aria-current="page">Import ILI listing</li>
        </ol>
      </nav>
      <div className="page-head">
        <h1>Import ILI listing</h1>
        <p className="subtitle">
          {asset.name} · {humanize(asset.type)}
        </p>
      </div>
      {!allowed ? (
        <Status>Importing a listing needs the measurements:write scope.</Status>
      ) : (
        <>
          <section aria-labelledby="listing-heading" className="card">
            <h2 id="listing-heading">Listing and run</h2>
            <form onSubmit={(e) => void uploadAndPreview(e)} noValidate className="form">
              <div className="field">
                <label htmlFor="ili-file">Listing file (CSV or XLSX)</label>
                <input
                  id="ili-file"
                  type="file"
                  accept=".csv,.xlsx,text/csv"
                  disabled={formDisabled}
                  onChange={(e) => setFile(e.target.files?.[0] ?? null)}
                  required
                />
              </div>
              <div className="field-row">
                <div className="field">
                  <label htmlFor="ili-vendor">Vendor</label>
                  <input
                    id="ili-vendor"
                    type="text"
                    maxLength={100}
                    value={vendor}
                    disabled={formDisabled}
                    onChange={(e) => setVendor(e.target.value)}
                    required
                  />
                </div>
                <div className="field">
                  <label htmlFor="ili-profile">Mapping profile</label>
                  <select id="ili-profile" value={profileId ?? ''} disabled={formDisabled} onChange={(e) => setProfileId(e.target.value)}>
                    {data.iliMappingProfiles.map((p) => (
                      <option key={p.id} value={p.id}>
                        {p.vendor ? `${p.name} (${p.vendor})` : p.name}
                      </option>
                    ))}
                  </select>
                </div>
              </div>
              <fieldset className="field checkbox-group">
                <legend>Tool technologies</legend>
                {TOOL_TECHNOLOGIES.map((tool) => (
                  <label key={tool}>
                    <input
                      type="checkbox"
                      checked={tools.has(tool)}
                      disabled={formDisabled}
                      onChange={(e) => {
                        const next = new Set(tools);
                        if (e.target.checked) next.add(tool);
                        else next.delete(tool);
                        setTools(next);
                      }}
                    />{' '}
                    {tool}
                  </label>
                ))}
              </fieldset>
              <div className="field-row">
                <div className="field">
                  <label htmlFor="ili-run-date">Run date</label>
                  <input
                    id="ili-run-date"
                    type="date"
                    max={today()}
                    value={runDate}
                    disabled={formDisabled}
                    onChange={(e) => setRunDate(e.target.value)}
                    required
                  />
                </div>
                <div className="field">
                  <label htmlFor="ili-discovered">Discovery date (optional)</label>
                  <input
                    id="ili-discovered"
                    type="date"
                    min={runDate || undefined}
                    max={today()}
                    value={discoveredAt}
                    disabled={formDisabled}
                    onChange={(e) => setDiscoveredAt(e.target.value)}
                    aria-describedby="ili-discovered-hint"
                  />
                </div>
              </div>
              <p id="ili-discovered-hint" className="hint">
                Discovery date: when the operator had enough information to decide on the anomalies; the run date when empty. Both are days in {zoneLabel(zone)}
                .
              </p>
              <ErrorAlert>{step.name === 'form' || step.name === 'uploading' ? failure : null}</ErrorAlert>
              {step.name === 'form' ? (
                <button type="submit" className="button button-primary">
                  Upload and preview
                </button>
              ) : null}
            </form>
            {step.name === 'uploading' ? (
              <div className="field">
                <label htmlFor="upload-progress">
                  Uploading: {formatNumber(step.sent)} of {formatNumber(step.total)} bytes
                </label>
                <progress id="upload-progress" max={step.total} value={step.sent} />
              </div>
            ) : null}
          </section>
          {step.name === 'preview' ? (
            <section aria-labelledby="preview-heading" className="card">
              <h2 id="preview-heading">Preview</h2>
              <PreviewView preview={step.preview} />
              <ErrorAlert>{failure}</ErrorAlert>
              <p>
                <button
                  type="button"
                  className="button button-primary"
                  disabled={step.preview.problem !== null}
                  onClick={() => void startImport(step.uploadId)}
                >
                  Start import
                </button>{' '}
                <button type="button" className="button" onClick={() => setStep({ name: 'form' })}>
                  Choose another file
                </button>
              </p>
            </section>
          ) : null}
          {step.name === 'importing' && step.job && !finished ? (
            <section aria-labelledby="progress-heading" className="card">
              <h2 id="progress-heading">Importing</h2>
              <div className="field">
                <label htmlFor="import-progress">
                  {humanize(step.job.progress.phase)}: {formatNumber(step.job.progress.done)}
                  {step.job.progress.total === null ? ' rows' : ` of ${formatNumber(step.job.progress.total)} rows`}
                </label>
                <progress
                  id="import-progress"
                  max={step.job.progress.total ?? undefined}
                  value={step.job.progress.total === null ? undefined : step.job.progress.done}
                />
              </div>
              <ErrorAlert>{failure}</ErrorAlert>
            </section>
          ) : null}
          {report && finished ? <ImportReport job={report} assetId={asset.id} /> : null}
        </>
      )}
    </>
  );
}
