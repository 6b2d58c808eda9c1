/**
 * One operation for each root field this subgraph adds to the supergraph. The scope matrix
 * (test/auth/scope-matrix.test.ts) sends each through the gateway with exactly the scopes the field requires, without
 * them, with their alias spelling and with admin:*, and fails while a root field has no operation here.
 */
export const rootOperations: Record<string, string> = {
  'Query.complianceObligations': '{ complianceObligations { obligation } }',
  'Query.complianceStatus': '{ complianceStatus { totalCount } }',
  'Query.complianceSettings': '{ complianceSettings { timeZone } }',
  'Mutation.updateComplianceSettings': 'mutation { updateComplianceSettings(input: {}) { timeZone } }',
};
