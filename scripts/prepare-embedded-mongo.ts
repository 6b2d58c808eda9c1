/**
 * `npm run mongo:prepare`: builds the embedded MongoDB launcher (tools/mongo) ahead of time, so CI fetches the
 * Maven artifacts once, outside the tests. Prints one line.
 */
import { EmbeddedMongoUnavailableError, prepareEmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';

async function main(): Promise<void> {
  const started = Date.now();
  try {
    await prepareEmbeddedMongo();
  } catch (err) {
    console.error(err instanceof EmbeddedMongoUnavailableError ? err.message : `Embedded MongoDB launcher not ready: ${(err as Error).message}`);
    process.exit(1);
  }
  console.log(`Embedded MongoDB launcher ready (tools/mongo/target, ${((Date.now() - started) / 1000).toFixed(1)} s).`);
}

void main();
