import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Db } from 'mongodb';
import { v7 as uuidv7 } from 'uuid';
import { invalidInput, violationsOf } from '@linepack/lib/validation';
import { decodeCursor, encodeCursor, pageSize, toConnection } from '@linepack/lib/pagination';
import { TenantCollection } from '@linepack/lib/tenant-collection';
import { MAX_BASE64_BYTES } from '@linepack/lib/scalars';
import { POF_DEFAULT_PROFILE, validateMappingProfile, InvalidMappingProfileError } from '@linepack/lib/ili/listing';
import { z } from 'zod';
import {
  ILI_COLLECTIONS,
  type IliListingFormat,
  type IliProfileDocument,
  type IliRunDocument,
  type IliTallyDocument,
  type IliUploadDocument,
  type IliUploadPartDocument,
} from './documents';
import { incompleteUpload } from './upload-checks';

/** What a feature's location reads of a tally item. */
const TALLY_LOCATION_FIELDS = { kind: 1, logDistanceM: 1, jointNumber: 1, name: 1 } as const;

export const MAX_FILE_BYTES = 512 * 1024 * 1024;
export const POF_PROFILE_ID = POF_DEFAULT_PROFILE.id;

const uploadInput = z.object({
  fileName: z.string().trim().min(1, 'must not be empty').max(200, 'at most 200 characters'),
  format: z.enum(['CSV', 'XLSX']),
  sizeBytes: z.number().int().min(1, 'must be more than 0').max(MAX_FILE_BYTES, `at most ${MAX_FILE_BYTES} bytes (512 MiB)`),
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits (the SHA-256 of the whole file)'),
});

/** The tenant's ILI records: uploads, runs and their tally, mapping profiles. */
export class IliStore {
  readonly runs: TenantCollection<IliRunDocument>;
  readonly tally: TenantCollection<IliTallyDocument>;
  private readonly uploads: TenantCollection<IliUploadDocument>;
  private readonly parts: TenantCollection<IliUploadPartDocument>;
  private readonly profiles: TenantCollection<IliProfileDocument>;

  constructor(
    db: Db,
    readonly tenantId: string,
    deadline?: number,
  ) {
    this.runs = new TenantCollection(db.collection<IliRunDocument>(ILI_COLLECTIONS.runs), tenantId, deadline);
    this.tally = new TenantCollection(db.collection<IliTallyDocument>(ILI_COLLECTIONS.tally), tenantId, deadline);
    this.uploads = new TenantCollection(db.collection<IliUploadDocument>(ILI_COLLECTIONS.uploads), tenantId, deadline);
    this.parts = new TenantCollection(db.collection<IliUploadPartDocument>(ILI_COLLECTIONS.uploadParts), tenantId, deadline);
    this.profiles = new TenantCollection(db.collection<IliProfileDocument>(ILI_COLLECTIONS.profiles), tenantId, deadline);
  }

  async createUpload(input: unknown): Promise<IliUploadDocument> {
    const parsed = uploadInput.safeParse(input);
    if (!parsed.success) throw invalidInput(violationsOf(parsed.error, 'input'));
    const doc: IliUploadDocument = {
      _id: randomUUID(),
      tenantId: this.tenantId,
      ...parsed.data,
      format: parsed.data.format as IliListingFormat,
      sha256: parsed.data.sha256.toLowerCase(),
      receivedBytes: 0,
      receivedParts: 0,
      createdAt: new Date(),
    };
    await this.uploads.insertOne(doc);
    return doc;
  }

  upload(id: string): Promise<IliUploadDocument | null> {
    return this.uploads.findOne({ _id: id });
  }

  /** Parts arrive in order; a part sent again with the same bytes is answered as stored (a client's retry). */
  async appendPart(uploadId: string, index: number, data: Buffer): Promise<IliUploadDocument> {
    const upload = await this.upload(uploadId);
    if (!upload) throw invalidInput([{ field: 'uploadId', message: 'no upload with this id in your tenant' }]);
    if (data.length === 0 || data.length > MAX_BASE64_BYTES) throw invalidInput([{ field: 'data', message: `must hold 1 to ${MAX_BASE64_BYTES} bytes` }]);
    const sha256 = createHash('sha256').update(data).digest('hex');
    if (index < upload.receivedParts) {
      const stored = await this.parts.findOne({ _id: `${uploadId}:${index}` }, { projection: { sha256: 1 } });
      if (stored?.sha256 === sha256) return upload;
      throw invalidInput([{ field: 'index', message: `part ${index} is already stored with other bytes; parts cannot be replaced` }]);
    }
    if (index !== upload.receivedParts) throw invalidInput([{ field: 'index', message: `parts arrive in order: the next is ${upload.receivedParts}` }]);
    if (upload.receivedBytes + data.length > upload.sizeBytes)
      throw invalidInput([{ field: 'data', message: `more bytes than the ${upload.sizeBytes} announced` }]);
    await this.parts.insertOne({ _id: `${uploadId}:${index}`, tenantId: this.tenantId, uploadId, index, data, sha256 });
    const updated = await this.uploads.findOneAndUpdate(
      { _id: uploadId, receivedParts: index },
      { $inc: { receivedParts: 1, receivedBytes: data.length } },
      { returnDocument: 'after' },
    );
    return updated ?? (await this.upload(uploadId))!;
  }

  private async part(upload: IliUploadDocument, index: number): Promise<Buffer> {
    const part = await this.parts.findOne({ _id: `${upload._id}:${index}` });
    if (!part) throw new Error(`upload ${upload._id}: part ${index} is missing`);
    return Buffer.from(part.data.buffer ?? part.data);
  }

  /** The uploaded file as a stream of its parts, read one part at a time. */
  fileStream(upload: IliUploadDocument): Readable {
    return this.hashedRead(upload).stream;
  }

  /**
   * The uploaded file as a stream, hashed on the way: the import's first pass checks the bytes against the announced
   * size and SHA-256 as it parses them, rather than reading the file once more first. `verify()` — after the parser is
   * done with the stream — hashes whatever it left unread, and says what is wrong or null.
   */
  hashedRead(upload: IliUploadDocument): { stream: Readable; verify: () => Promise<string | null> } {
    const hash = createHash('sha256');
    let next = 0;
    const read = (index: number) => this.part(upload, index);
    const stream = Readable.from(
      (async function* () {
        while (next < upload.receivedParts) {
          const part = await read(next);
          // Hashed and counted before it is handed on: a stream destroyed at this yield has hashed exactly `next` parts.
          hash.update(part);
          next++;
          yield part;
        }
      })(),
    );
    const verify = async (): Promise<string | null> => {
      if (upload.receivedBytes !== upload.sizeBytes) return incompleteUpload(upload);
      // The parser may stop before the end (a refused header, a reader that does not drain): stop the stream and let
      // its generator settle, then hash the rest.
      if (!stream.closed) {
        const closed = new Promise((resolve) => stream.once('close', resolve));
        stream.destroy();
        await closed;
      }
      while (next < upload.receivedParts) hash.update(await read(next++));
      const actual = hash.digest('hex');
      return actual === upload.sha256 ? null : `the uploaded bytes have SHA-256 ${actual}, not the ${upload.sha256} announced`;
    };
    return { stream, verify };
  }

  async deleteUploadParts(uploadId: string): Promise<void> {
    await this.parts.deleteMany({ uploadId });
  }

  // Runs and their tally

  newRunId(): string {
    return uuidv7();
  }

  run(id: string): Promise<IliRunDocument | null> {
    return this.runs.findOne({ _id: id });
  }

  runsOf(assetId: string): Promise<IliRunDocument[]> {
    return this.runs.find({ assetId }, { sort: { runDate: -1 } }).toArray();
  }

  async tallyPage(runId: string, kinds: readonly string[] | null | undefined, first: number | null | undefined, after: string | null | undefined) {
    const size = pageSize(first);
    const cursor = decodeCursor(after, z.tuple([z.number(), z.string()]));
    const filter: Record<string, unknown> = { runId, ...(kinds && kinds.length > 0 ? { kind: { $in: [...kinds] } } : {}) };
    const page = cursor ? { ...filter, $or: [{ logDistanceM: { $gt: cursor[0] } }, { logDistanceM: cursor[0], _id: { $gt: cursor[1] } }] } : filter;
    const [rows, totalCount] = await Promise.all([
      this.tally.find(page, { sort: { logDistanceM: 1, _id: 1 }, limit: size + 1 }).toArray(),
      this.tally.countDocuments(filter),
    ]);
    return toConnection(rows, size, totalCount, (row) => encodeCursor([row.logDistanceM, row._id]), cursor == null);
  }

  /**
   * The run's tally items of these kinds whose log distance lies in any of the intervals, in log-distance order: one
   * query (index tenant_run_kind_distance) for the welds around every feature of a dig-list page.
   */
  tallyWithin(runId: string, kinds: readonly string[], intervals: readonly (readonly [number, number])[]): Promise<IliTallyDocument[]> {
    if (intervals.length === 0) return Promise.resolve([]);
    return this.tally
      .find({ runId, kind: { $in: [...kinds] }, $or: intervals.map(([from, to]) => ({ logDistanceM: { $gte: from, $lte: to } })) } as never, {
        sort: { logDistanceM: 1 },
        projection: TALLY_LOCATION_FIELDS,
      })
      .toArray();
  }

  /** The run's tally items of these kinds, in log-distance order (the markers of a run: a few per kilometre). */
  tallyOfKinds(runId: string, kinds: readonly string[]): Promise<IliTallyDocument[]> {
    return this.tally.find({ runId, kind: { $in: [...kinds] } } as never, { sort: { logDistanceM: 1 }, projection: TALLY_LOCATION_FIELDS }).toArray();
  }

  /** The nearest tally item of these kinds at or before (`upstream`) or after (`downstream`) a log distance; null when none. */
  nearestTallyItem(runId: string, kinds: readonly string[], logDistanceM: number, side: 'upstream' | 'downstream'): Promise<IliTallyDocument | null> {
    return this.tally.findOne(
      { runId, kind: { $in: [...kinds] }, logDistanceM: side === 'upstream' ? { $lte: logDistanceM } : { $gt: logDistanceM } } as never,
      { sort: { logDistanceM: side === 'upstream' ? -1 : 1 }, projection: TALLY_LOCATION_FIELDS },
    );
  }

  // Mapping profiles

  async profile(id: string | null | undefined): Promise<{ id: string; name: string; vendor: string | null; definition: Record<string, unknown> } | null> {
    if (!id || id === POF_PROFILE_ID)
      return { id: POF_PROFILE_ID, name: POF_DEFAULT_PROFILE.name, vendor: null, definition: POF_DEFAULT_PROFILE as unknown as Record<string, unknown> };
    const doc = await this.profiles.findOne({ _id: id });
    return doc ? { id: doc._id, name: doc.name, vendor: doc.vendor, definition: doc.definition } : null;
  }

  async listProfiles() {
    const own = await this.profiles.find({}, { sort: { name: 1 } }).toArray();
    return [(await this.profile(POF_PROFILE_ID))!, ...own.map((doc) => ({ id: doc._id, name: doc.name, vendor: doc.vendor, definition: doc.definition }))];
  }

  async saveProfile(input: { name: string; vendor: string; definitionJson: string }) {
    const violations: { field: string; message: string }[] = [];
    const name = input.name.trim();
    const vendor = input.vendor.trim();
    if (name.length < 1 || name.length > 100) violations.push({ field: 'input.name', message: 'must be 1–100 characters' });
    if (vendor.length < 1 || vendor.length > 100) violations.push({ field: 'input.vendor', message: 'must be 1–100 characters' });
    if (input.definitionJson.length > 100_000) violations.push({ field: 'input.definitionJson', message: 'at most 100,000 characters' });
    let definition: Record<string, unknown> = {};
    if (violations.length === 0) {
      try {
        definition = JSON.parse(input.definitionJson) as Record<string, unknown>;
        definition = { ...definition, id: (await this.profiles.findOne({ name }, { projection: { _id: 1 } }))?._id ?? randomUUID(), name, vendor };
        validateMappingProfile(definition);
      } catch (err) {
        const message = err instanceof InvalidMappingProfileError || err instanceof SyntaxError ? err.message : 'is not a valid mapping profile';
        violations.push({ field: 'input.definitionJson', message });
      }
    }
    if (violations.length > 0) throw invalidInput(violations);
    const doc = await this.profiles.findOneAndUpdate(
      { name },
      { $set: { vendor, definition, updatedAt: new Date() }, $setOnInsert: { _id: definition['id'] as string, tenantId: this.tenantId } },
      { upsert: true, returnDocument: 'after' },
    );
    return { id: doc!._id, name: doc!.name, vendor: doc!.vendor, definition: doc!.definition };
  }
}
