/**
 * How long a polling worker waits before looking for work again: `minMs` while it finds work, doubling up to `maxMs`
 * while it finds none. An idle replica then asks its database about once per `maxMs` instead of twice a second; work
 * queued in the same process wakes the worker at once, and work queued elsewhere waits at most `maxMs`.
 */
export class IdleBackoff {
  private nextMs: number;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
  ) {
    if (!(minMs > 0) || !(maxMs >= minMs)) throw new Error(`IdleBackoff needs 0 < minMs ≤ maxMs (got ${minMs}, ${maxMs})`);
    this.nextMs = minMs;
  }

  /** The wait after a look that found nothing; the next one is twice as long, up to maxMs. */
  idle(): number {
    const wait = this.nextMs;
    this.nextMs = Math.min(this.maxMs, this.nextMs * 2);
    return wait;
  }

  /** The wait after a look that found work: the shortest, and the backoff starts over. */
  busy(): number {
    this.nextMs = this.minMs;
    return this.minMs;
  }
}
