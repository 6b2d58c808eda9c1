import { subgraphCodegenConfig } from '@linepack/schema/codegen-config';

export default subgraphCodegenConfig('auth', __dirname, {
  mappers: { ApiKey: '../documents#ApiKeyDocument', AuditEvent: '../audit#AuditEventDocument' },
  scalars: { DateTime: 'Date' },
});
