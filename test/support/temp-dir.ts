import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A directory of this test file's own under the system's temporary directory, removed with everything in it after
 * the file's tests (listings written for an import, exports): a run leaves nothing behind. Call it at the top level
 * of the file, where jest takes the afterAll it registers.
 */
export function testTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
