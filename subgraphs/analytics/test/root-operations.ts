/**
 * One operation for each root field this subgraph adds to the supergraph. The scope matrix
 * (test/auth/scope-matrix.test.ts) sends each through the gateway with exactly the scopes the field requires, without
 * them, with their alias spelling and with admin:*, and fails while a root field has no operation here.
 */
export const rootOperations: Record<string, string> = {
  'Query.modifiedB31G':
    '{ modifiedB31G(input: { outsideDiameterMm: 610, wallThicknessMm: 9.5, smysMpa: 359, defectDepthMm: 3, defectLengthMm: 150, classLocation: 2 }) { failurePressureKpa } }',
  'Query.riskRegister': '{ riskRegister { totalCount } }',
  'Query.analyticsSettings': '{ analyticsSettings { toolTolerancePctWt } }',
  'Query.digList': '{ digList { totalCount } }',
  'Mutation.updateAnalyticsSettings': 'mutation { updateAnalyticsSettings(input: {}) { toolTolerancePctWt } }',
  'Mutation.recordFieldResult':
    'mutation { recordFieldResult(input: { idempotencyKey: "sm-fr", measurementId: "m", examinedAt: "2026-01-01T00:00:00Z", method: UT, measuredDepthPctWt: 40 }) { id } }',
  'Mutation.recordRepair':
    'mutation { recordRepair(input: { idempotencyKey: "sm-rp", measurementIds: ["m"], repairType: TYPE_B_SLEEVE, repairedAt: "2026-01-01T00:00:00Z" }) { id } }',
  'Mutation.recordPressureReduction':
    'mutation { recordPressureReduction(input: { idempotencyKey: "sm-pr", measurementIds: ["m"], reducedPressureKpa: 5000, effectiveAt: "2026-01-01T00:00:00Z", reason: "r" }) { id } }',
  'Mutation.liftPressureReduction': 'mutation { liftPressureReduction(id: "00000000-0000-4000-8000-000000000000", liftedAt: "2026-01-02T00:00:00Z") { id } }',
};
