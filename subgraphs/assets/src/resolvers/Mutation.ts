import { createHash, randomUUID } from 'node:crypto';
import { fieldError } from '@linepack/lib/errors';
import { isDuplicateKeyError } from '@linepack/lib/mongo';
import { invalidInput, validateInput } from '@linepack/lib/validation';
import type { SubgraphContext } from '../context';
import { outboxEntry } from '@linepack/lib/events/outbox';
import { ASSET_UPSERTED, assetEventData, type AssetDocument, type AssetType } from '../documents';
import type { MutationResolvers } from '../generated/resolvers-types';
import { allowedParentTypes, checkAssetConsistency, checkStatusTransition, createAssetSchema, updateAssetSchema, type UpdateAssetValues } from '../validation';

/**
 * A parent must exist in the tenant and be of a type allowed above this one. Types only allow parents
 * higher in the hierarchy and never change, so no reparenting can create a cycle.
 */
async function checkParent(context: SubgraphContext, type: AssetType, parentId: string | null): Promise<void> {
  const allowed = allowedParentTypes[type];
  if (parentId === null) return;
  const parent = await context.assets.findById(parentId);
  if (!parent) throw invalidInput([{ field: 'input.parentId', message: `no asset ${parentId} in this tenant` }]);
  if (!allowed.includes(parent.type)) {
    throw invalidInput([
      {
        field: 'input.parentId',
        message: `a ${type} cannot belong to a ${parent.type}${allowed.length ? ` (allowed parents: ${allowed.join(', ')})` : ` (a ${type} has no parent)`}`,
      },
    ]);
  }
}

/** Validates a change against the stored asset and applies it with its event, if nobody changed the asset meanwhile. */
async function applyUpdate(context: SubgraphContext, id: string, version: number, changes: UpdateAssetValues): Promise<AssetDocument> {
  const current = await context.assets.findById(id);
  if (!current) throw fieldError('NOT_FOUND', `no asset ${id}`, { field: 'id' });
  if (current.version !== version) {
    throw fieldError('CONFLICT', `asset ${id} is at version ${current.version}, not ${version}: read it again and retry`, { currentVersion: current.version });
  }
  if (changes.status) checkStatusTransition(current.status, changes.status);
  checkAssetConsistency({ ...current, ...changes });
  if (changes.parentId !== undefined) await checkParent(context, current.type, changes.parentId);
  const set: Partial<AssetDocument> = { ...changes, ...(changes.name ? { nameLower: changes.name.toLowerCase() } : {}), updatedAt: new Date() };
  const next = { ...current, ...set, version: current.version + 1 };
  const updated = await context.assets.updateIfVersion(id, version, set, outboxEntry(ASSET_UPSERTED, assetEventData(next)));
  if (!updated) {
    const latest = await context.assets.findById(id);
    throw fieldError('CONFLICT', `asset ${id} changed while this update was applied: read it again and retry`, { currentVersion: latest?.version ?? null });
  }
  return updated;
}

/**
 * The asset an earlier createAsset with the same idempotency key made: answered again when the input is the same,
 * refused naming it when not (a key reused by mistake must not pass for a retry).
 */
function repeatedCreate(earlier: AssetDocument, key: string, inputDigest: string): AssetDocument {
  if (earlier.idempotency?.inputDigest === inputDigest) return earlier;
  throw fieldError(
    'CONFLICT',
    `idempotencyKey "${key}" already created asset ${earlier._id} from a different input: nothing was created; send a new key to create another asset`,
    { field: 'input.idempotencyKey', assetId: earlier._id },
  );
}

export const Mutation: MutationResolvers = {
  createAsset: async (_parent, { input }, context) => {
    const { idempotencyKey, ...values } = validateInput(createAssetSchema, input);
    checkAssetConsistency(values);
    // zod builds the values in the schema's key order whatever order the client sent, with defaults filled in:
    // their JSON is the input compared, so leaving out a default and sending it are the same input.
    const idempotency = idempotencyKey
      ? { scope: `${context.identity.tenantId}/${idempotencyKey}`, inputDigest: createHash('sha256').update(JSON.stringify(values)).digest('hex') }
      : undefined;
    if (idempotency) {
      const earlier = await context.assets.findByIdempotencyScope(idempotency.scope);
      if (earlier) return repeatedCreate(earlier, idempotencyKey!, idempotency.inputDigest);
    }
    await checkParent(context, values.type, values.parentId);
    const now = new Date();
    const asset: Omit<AssetDocument, 'tenantId'> = {
      _id: randomUUID(),
      ...values,
      nameLower: values.name.toLowerCase(),
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    const event = outboxEntry(ASSET_UPSERTED, assetEventData({ ...asset, tenantId: context.identity.tenantId }));
    try {
      return await context.assets.insert({ ...asset, ...(idempotency ? { idempotency } : {}), outbox: [event] });
    } catch (err) {
      // The same key sent twice at once: the first insert holds the key, the other answers with its asset.
      if (!idempotency || !isDuplicateKeyError(err)) throw err;
      const earlier = await context.assets.findByIdempotencyScope(idempotency.scope);
      if (!earlier) throw err;
      return repeatedCreate(earlier, idempotencyKey!, idempotency.inputDigest);
    }
  },

  updateAsset: async (_parent, { id, version, input }, context) => applyUpdate(context, id, version, validateInput(updateAssetSchema, input)),

  decommissionAsset: (_parent, { id, version }, context) => applyUpdate(context, id, version, { status: 'ABANDONED' }),
};
