import { subgraphCodegenConfig } from '@linepack/schema/codegen-config';

export default subgraphCodegenConfig('measurements', __dirname, {
  mappers: {
    Measurement: '../documents#MeasurementDocument',
    MeasurementConnection: '../documents#MeasurementPage',
    Asset: '../documents#AssetReference',
    PipelineSummary: '../documents#PipelineSummaryParent',
    IliRun: '../ili/documents#IliRunDocument',
    IliImport: '../ili/documents#IliImportJob',
    IliUpload: '../ili/documents#IliUploadDocument',
    IliTallyItem: '../ili/documents#IliTallyDocument',
    IliTallyConnection: '../ili/documents#IliTallyPage',
    IliMappingProfile: '../ili/documents#IliProfileView',
  },
  scalars: { DateTime: 'Date', Base64: 'Buffer' },
});
