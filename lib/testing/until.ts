/**
 * Reads until `ok` holds or the time is up, and returns the last value read (assert on it). The default bound is long
 * (30 s): it only costs time when the test is already failing, and a loaded machine may take seconds to settle.
 */
export async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Polls `check` until it is true (errors count as false) or the time is up; says which. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** `eventually`, failing with what was waited for when the time is up. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string, intervalMs = 100): Promise<void> {
  if (!(await eventually(check, timeoutMs, intervalMs))) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
}
