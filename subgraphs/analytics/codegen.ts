import { subgraphCodegenConfig } from '@linepack/schema/codegen-config';

export default subgraphCodegenConfig('analytics', __dirname, {
  mappers: {
    Asset: '../documents#AssetReference',
    Measurement: '../documents#MeasurementReference',
    PipelineSummary: '../documents#SummaryParent',
    AnomalyAssessment: '../documents#AssessmentDocument',
    SegmentRisk: '../documents#RiskDocument',
    RiskRegisterEntry: '../documents#RiskDocument',
    AnalyticsSettings: '../compute#TenantSettings',
  },
  scalars: { DateTime: 'Date' },
});
