import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { MAX_BASE64_BYTES } from '../scalars';

/**
 * Imports a listing file through the API as any client does: announce the upload (size, SHA-256), send it in 4 MiB
 * parts, start the import, and follow the job until it finishes. The CLI, the tests and bench:ili use it.
 */

export interface IliImportRequest {
  gatewayUrl: string;
  apiKey: string;
  file: string;
  assetId: string;
  profileId?: string | null;
  run: {
    vendor: string;
    toolTechnologies: string[];
    runDate: string;
    toolTolerancePctWt?: number | null;
    certaintyPct?: number | null;
    discoveredAt?: string | null;
  };
  /** Called after each part is sent and each time the job's progress is read. */
  onProgress?: (event: { stage: 'uploading' | 'importing'; done: number; total: number | null; phase: string }) => void;
  /** How often the job is polled (default 500 ms). */
  pollMs?: number;
}

export interface IliImportResult {
  id: string;
  state: 'SUCCEEDED' | 'FAILED';
  failure: string | null;
  counts: { rows: number; features: number; tallyItems: number; rejectedRows: number };
  errorCount: number;
  errors: { rowNumber: number; column: string | null; rule: string; value: string | null }[];
  attempts: number;
  run: { id: string; status: string };
}

class IliClientError extends Error {}

/** One GraphQL request to the gateway with an API key; the data, or an error carrying every GraphQL error's message. */
export async function gatewayCall<T>(gatewayUrl: string, apiKey: string, query: string, variables: Record<string, unknown>): Promise<T> {
  const res = await fetch(gatewayUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json().catch(() => ({}))) as { data?: T; errors?: { message: string }[] };
  if (body.errors?.length || !body.data) throw new IliClientError(body.errors?.map((e) => e.message).join('; ') ?? `HTTP ${res.status}`);
  return body.data;
}

const call = <T>(request: IliImportRequest, query: string, variables: Record<string, unknown>): Promise<T> =>
  gatewayCall<T>(request.gatewayUrl, request.apiKey, query, variables);

const formatOf = (file: string): 'CSV' | 'XLSX' => (/\.xlsx$/i.test(file) ? 'XLSX' : 'CSV');

const IMPORT_FIELDS =
  'id state failure attempts counts { rows features tallyItems rejectedRows } errorCount errors(first: 1000) { rowNumber column rule value } progress { done total phase } run { id status }';

/** Uploads and imports `file`; resolves when the import has SUCCEEDED or FAILED. */
export async function importListing(request: IliImportRequest): Promise<IliImportResult> {
  const { size } = await stat(request.file);
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(request.file)) hash.update(chunk as Buffer);
  const upload = await call<{ createIliUpload: { id: string } }>(request, 'mutation($i: CreateIliUploadInput!) { createIliUpload(input: $i) { id } }', {
    i: { fileName: request.file.split('/').pop(), format: formatOf(request.file), sizeBytes: size, sha256: hash.digest('hex') },
  });
  const uploadId = upload.createIliUpload.id;
  let index = 0;
  let sent = 0;
  for await (const part of createReadStream(request.file, { highWaterMark: MAX_BASE64_BYTES })) {
    await call(request, 'mutation($u: ID!, $n: Int!, $d: Base64!) { appendIliUploadPart(uploadId: $u, index: $n, data: $d) { receivedBytes } }', {
      u: uploadId,
      n: index++,
      d: (part as Buffer).toString('base64'),
    });
    sent += (part as Buffer).length;
    request.onProgress?.({ stage: 'uploading', done: sent, total: size, phase: 'uploading' });
  }
  const started = await call<{ startIliImport: { id: string } }>(request, 'mutation($i: StartIliImportInput!) { startIliImport(input: $i) { id } }', {
    i: { uploadId, assetId: request.assetId, profileId: request.profileId ?? null, run: request.run },
  });
  for (;;) {
    const { iliImport } = await call<{ iliImport: IliImportResult & { progress: { done: number; total: number | null; phase: string } } }>(
      request,
      `query($id: ID!) { iliImport(id: $id) { ${IMPORT_FIELDS} } }`,
      { id: started.startIliImport.id },
    );
    request.onProgress?.({ stage: 'importing', ...iliImport.progress });
    if (iliImport.state === 'SUCCEEDED' || iliImport.state === 'FAILED') return iliImport;
    await new Promise((r) => setTimeout(r, request.pollMs ?? 500));
  }
}
