/**
 * One operation for each root field this subgraph adds to the supergraph. The scope matrix
 * (test/auth/scope-matrix.test.ts) sends each through the gateway with exactly the scopes the field requires, without
 * them, with their alias spelling and with admin:*, and fails while a root field has no operation here.
 */
export const rootOperations: Record<string, string> = {
  'Query.asset': '{ asset(id: "00000000-0000-4000-8000-000000000000") { id } }',
  'Query.assets': '{ assets { totalCount } }',
  'Query.pipelineSummary': '{ pipelineSummary { tenantId } }',
  'Mutation.createAsset': 'mutation { createAsset(input: { type: SYSTEM, name: "scope matrix" }) { id } }',
  'Mutation.updateAsset': 'mutation { updateAsset(id: "00000000-0000-4000-8000-000000000000", version: 1, input: { name: "x" }) { id } }',
  'Mutation.decommissionAsset': 'mutation { decommissionAsset(id: "00000000-0000-4000-8000-000000000000", version: 1) { id } }',
};
