import { invalidInput } from '@linepack/lib/validation';
import type { MutationResolvers } from '../generated/resolvers-types';
import type { SubgraphContext } from '../context';
import { validateBatch } from '../validation';
import { startIliImport } from '../ili/start-import';

/** All or nothing: any invalid item rejects the batch before anything is written. */
async function record(items: readonly unknown[], { measurements, assetRefs, identity }: SubgraphContext) {
  const { items: valid, violations } = validateBatch(items);
  if (violations.length > 0) throw invalidInput(violations);
  if (assetRefs) {
    const unknown = await assetRefs.unknown(identity.tenantId, [...new Set(valid.map((item) => item.assetId))], identity.deadline);
    if (unknown.size > 0) {
      throw invalidInput(
        valid.flatMap((item, index) =>
          unknown.has(item.assetId) ? [{ field: `input[${index}].assetId`, message: 'no asset with this id in your tenant' }] : [],
        ),
      );
    }
  }
  return measurements.record(valid);
}

export const Mutation: MutationResolvers = {
  recordMeasurement: (_parent, { input }, context) =>
    record([input], context).catch((err: unknown) => {
      throw renameSingle(err);
    }),
  recordMeasurements: (_parent, { input }, context) => record(input, context),
  createIliUpload: (_parent, { input }, { ili }) => ili.createUpload(input),
  appendIliUploadPart: (_parent, { uploadId, index, data }, { ili }) => ili.appendPart(uploadId, index, data),
  startIliImport: async (_parent, { input }, { ili, jobs, assetRefs, wakeJobRunner }) => {
    const job = await startIliImport(input, { ili, jobs, assetRefs });
    wakeJobRunner();
    return job;
  },
  saveIliMappingProfile: (_parent, { input }, { ili }) => ili.saveProfile(input),
};

/** A single item is reported as `input.field`, not `input[0].field`. */
function renameSingle(err: unknown): unknown {
  if (err instanceof Error && 'extensions' in err) {
    const ext = (err as { extensions: Record<string, unknown> }).extensions;
    const violations = ext['violations'] as { field: string; message: string }[] | undefined;
    if (violations) return invalidInput(violations.map((v) => ({ ...v, field: v.field.replace(/^input\[0\]/, 'input') })));
  }
  return err;
}
