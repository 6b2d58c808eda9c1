import { subgraphCodegenConfig } from '@linepack/schema/codegen-config';

export default subgraphCodegenConfig('measurements', __dirname, {
  mappers: {
    Measurement: '../documents#MeasurementDocument',
    Asset: '../documents#AssetReference',
    PipelineSummary: '../documents#PipelineSummaryParent',
  },
  scalars: { DateTime: 'Date' },
});
