/** Jest global teardown: stops what global-setup.ts started (nothing when MONGODB_URI / REDIS_URL were given). */
import type { LinepackTestInfra } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const infra: LinepackTestInfra | undefined = globalThis.__LINEPACK_TEST_INFRA__;
  globalThis.__LINEPACK_TEST_INFRA__ = undefined;
  if (!infra) return;
  await Promise.all([infra.mongo?.stop(), infra.redis?.stop()]);
}
