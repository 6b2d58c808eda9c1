/**
 * The explorer's starting tabs: example operations from the README's "Using the API" (those that run as
 * they are, without an id to fill in), named so each tab has a title.
 */
export const exampleOperations: { query: string }[] = [
  { query: '{ pipelineSummary { totalAssets } }\n' },
  {
    query: `# assets:read (+ measurements:read, analytics:read, compliance:read for those subgraphs' fields)
query Overview {
  pipelineSummary {
    totalAssets
    totalPipelineLengthM
    assetsByType { type count }
    assetsByStatus { status count }
    measurementCount
    latestInspectionAt
    anomaliesByResponseCategory { responseCategory count }   # analytics:read
    segmentsByRiskBand { band count }
    complianceByState { state count }                        # compliance:read
    nextComplianceDueAt
  }
  assets(filter: { type: SEGMENT, inHca: true }, first: 20) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id name classLocation maopKpa parent { name } latestMeasurement { type observedAt } } }
  }
}
`,
  },
  {
    query: `# analytics:read — the tenant's risk register, highest score first
query RiskRegister {
  riskRegister(filter: { minScore: 10 }, first: 20) {
    totalCount
    edges { node { asset { id name } risk { score band drivers } } }
  }
}
`,
  },
  {
    query: `# compliance:read — what is overdue across the tenant, soonest due first
query Overdue {
  complianceStatus(filter: { state: OVERDUE }, first: 50) {
    totalCount
    edges { node { asset { id name } obligation dueAt } }
  }
}
`,
  },
  {
    query: `# analytics:read — the calculator (Modified B31G, 0.85dL)
query ModifiedB31G {
  modifiedB31G(input: { outsideDiameterMm: 610, wallThicknessMm: 9.5, smysMpa: 359, defectDepthMm: 3.8,
                        defectLengthMm: 200, regulation: CFR_192, classLocation: 3, maopKpa: 6900 }) {
    applicable notApplicableReason failurePressureKpa safePressureKpa erf failurePressureRatio modelVersion
  }
}
`,
  },
  {
    query: `# compliance:read — the catalogue
query Obligations {
  complianceObligations(regulation: CFR_192) { obligation regulationRef interval evidenceTypes evidenceFromAncestors }
}
`,
  },
  {
    query: `# any credential
query Me {
  me { id kind email tenantId tenants { tenantId name role } scopes }
}
`,
  },
];
