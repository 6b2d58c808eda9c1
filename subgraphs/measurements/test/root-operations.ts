/**
 * One operation for each root field this subgraph adds to the supergraph. The scope matrix
 * (test/auth/scope-matrix.test.ts) sends each through the gateway with exactly the scopes the field requires, without
 * them, with their alias spelling and with admin:*, and fails while a root field has no operation here.
 */
export const rootOperations: Record<string, string> = {
  'Query.measurement': '{ measurement(id: "00000000-0000-4000-8000-000000000000") { id } }',
  'Query.iliRun': '{ iliRun(id: "00000000-0000-4000-8000-000000000000") { id } }',
  'Query.iliImport': '{ iliImport(id: "00000000-0000-4000-8000-000000000000") { id } }',
  'Query.iliMappingProfiles': '{ iliMappingProfiles { id } }',
  'Query.iliUploadPreview': '{ iliUploadPreview(uploadId: "00000000-0000-4000-8000-000000000000") { header } }',
  'Mutation.recordMeasurement':
    'mutation { recordMeasurement(input: { idempotencyKey: "sm-1", assetId: "a", type: PATROL, observedAt: "2026-01-01T00:00:00Z", source: FIELD }) { insertedCount } }',
  'Mutation.recordMeasurements':
    'mutation { recordMeasurements(input: [{ idempotencyKey: "sm-2", assetId: "a", type: PATROL, observedAt: "2026-01-01T00:00:00Z", source: FIELD }]) { insertedCount } }',
  'Mutation.createIliUpload': `mutation { createIliUpload(input: { fileName: "a.csv", format: CSV, sizeBytes: 1, sha256: "${'0'.repeat(64)}" }) { id } }`,
  'Mutation.appendIliUploadPart': 'mutation { appendIliUploadPart(uploadId: "00000000-0000-4000-8000-000000000000", index: 0, data: "AA==") { id } }',
  'Mutation.startIliImport':
    'mutation { startIliImport(input: { uploadId: "u", assetId: "a", run: { vendor: "v", toolTechnologies: [MFL], runDate: "2026-01-01T00:00:00Z" } }) { id } }',
  'Mutation.saveIliMappingProfile': 'mutation { saveIliMappingProfile(input: { name: "p", vendor: "v", definitionJson: "{}" }) { id } }',
};
