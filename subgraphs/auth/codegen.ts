import { subgraphCodegenConfig } from '@linepack/schema/codegen-config';

export default subgraphCodegenConfig('auth', __dirname, {
  mappers: { ApiKey: '../documents#ApiKeyDocument' },
  scalars: { DateTime: 'Date' },
});
