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
    FieldResult: '../documents#FieldResultDocument',
    Repair: '../documents#RepairDocument',
    PressureReduction: '../documents#PressureReductionDocument',
    IliRun: '../ili-runs#IliRunReference',
    IliRunComparison: '../ili-runs#RunComparisonView',
    IliUnityPlotPoint: '../ili-runs#UnityPlotPointView',
  },
  scalars: { DateTime: 'Date' },
});
