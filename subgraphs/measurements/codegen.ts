import { subgraphCodegenConfig } from '@linepack/schema/codegen-config';

export default subgraphCodegenConfig('measurements', __dirname, {
  mappers: {
    Measurement: '../documents#MeasurementDocument',
    MeasurementConnection: '../documents#MeasurementPage',
    Asset: '../documents#AssetReference',
    PipelineSummary: '../documents#PipelineSummaryParent',
  },
  scalars: { DateTime: 'Date' },
});
