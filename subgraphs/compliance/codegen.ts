import { subgraphCodegenConfig } from '@linepack/schema/codegen-config';

export default subgraphCodegenConfig('compliance', __dirname, {
  mappers: {
    Asset: '../documents#AssetReference',
    ComplianceStatusRow: '../repository#StatusNode',
    ComplianceStatusConnection: '../repository#StatusPage',
    PipelineSummary: '../documents#SummaryParent',
  },
  scalars: { DateTime: 'Date' },
});
