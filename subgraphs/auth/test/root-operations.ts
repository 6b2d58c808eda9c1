/**
 * One operation for each root field this subgraph adds to the supergraph. The scope matrix
 * (test/auth/scope-matrix.test.ts) sends each through the gateway with exactly the scopes the field requires, without
 * them, with their alias spelling and with admin:*, and fails while a root field has no operation here.
 */
export const rootOperations: Record<string, string> = {
  'Query.me': '{ me { id } }',
  'Query.apiKeys': '{ apiKeys { id } }',
  'Query.auditEvents': '{ auditEvents { totalCount } }',
  'Query.users': '{ users { id } }',
  'Query.tenantUsers': '{ tenantUsers { totalCount } }',
  'Mutation.changePassword': 'mutation { changePassword(currentPassword: "x", newPassword: "y") }',
  'Mutation.signOutEverywhere': 'mutation { signOutEverywhere }',
  'Mutation.issuePasswordReset': 'mutation { issuePasswordReset(userId: "00000000-0000-4000-8000-000000000000") { token } }',
  'Mutation.rotateApiKey': 'mutation { rotateApiKey(id: "00000000-0000-4000-8000-000000000000") { secret } }',
  'Mutation.changeUserRole': 'mutation { changeUserRole(userId: "00000000-0000-4000-8000-000000000000", role: VIEWER) { id } }',
  'Mutation.removeUser': 'mutation { removeUser(userId: "00000000-0000-4000-8000-000000000000") }',
  'Mutation.addUser': 'mutation { addUser(input: { email: "not an address", role: VIEWER }) { user { id } } }',
  'Mutation.createApiKey': 'mutation { createApiKey(input: { name: "k", scopes: ["assets:read"] }) { secret } }',
  'Mutation.revokeApiKey': 'mutation { revokeApiKey(id: "00000000-0000-4000-8000-000000000000") { id } }',
};
