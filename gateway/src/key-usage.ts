import type { Logger } from '@linepack/lib/logger';
import { identityHeaderForAuth, postToAuthInternal } from './auth-internal';

/** How often a gateway reports which keys were used: lastUsedAt is at most this far behind. */
export const KEY_USAGE_FLUSH_MS = 5_000;

/**
 * Remembers when each API key was last used on this gateway and reports the batch to the auth service every few
 * seconds: lastUsedAt stays accurate to seconds with one write per batch, not one per request.
 */
export class KeyUsageReporter {
  private pending = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly authUrl: string,
    private readonly internalTokenPrivateKey: string,
    private readonly logger: Logger,
    intervalMs = KEY_USAGE_FLUSH_MS,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  used(keyId: string): void {
    this.pending.set(keyId, Date.now());
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await postToAuthInternal(this.authUrl, '/internal/keys/used', identityHeaderForAuth(this.internalTokenPrivateKey), {
        uses: [...batch].map(([id, at]) => ({ id, at: new Date(at).toISOString() })),
      });
    } catch (err) {
      // Keep the uses for the next round (a newer use of the same key wins).
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      this.logger.warn({ err: (err as Error).message, keys: batch.size }, 'key usage not reported; retrying with the next batch');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
