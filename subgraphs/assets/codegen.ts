import { subgraphCodegenConfig } from '@linepack/schema/codegen-config';

export default subgraphCodegenConfig('assets', __dirname, {
  mappers: { Asset: '../documents#AssetDocument', AssetConnection: '../documents#AssetPage', PipelineSummary: '../documents#PipelineSummaryParent' },
  scalars: { DateTime: 'Date', GeoJSON: '../documents#GeoJsonGeometry' },
});
