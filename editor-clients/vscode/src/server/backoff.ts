/**
 * When to restart a server that exited: exponential backoff, reset after a stable run.
 *
 * Delays are 1 s, 2 s, 4 s, ... capped at `maxDelayMs`; after `maxAttempts` crashes without a
 * run of `stableMs` in between, the policy gives up (the user restarts by hand).
 */
export class RestartPolicy {
  private attempts = 0;
  private startedAt: number | undefined;

  constructor(
    private readonly options: { baseDelayMs: number; maxDelayMs: number; maxAttempts: number; stableMs: number } = {
      baseDelayMs: 1000,
      maxDelayMs: 30_000,
      maxAttempts: 5,
      stableMs: 60_000,
    },
  ) {}

  /** The server came up at `now` (ms). */
  started(now: number): void {
    this.startedAt = now;
  }

  /** The server exited at `now` (ms): the delay before the next start, or `undefined` to give up. */
  exited(now: number): number | undefined {
    if (this.startedAt !== undefined && now - this.startedAt >= this.options.stableMs) {
      this.attempts = 0;
    }
    this.startedAt = undefined;
    this.attempts += 1;
    if (this.attempts > this.options.maxAttempts) {
      return undefined;
    }
    return Math.min(this.options.maxDelayMs, this.options.baseDelayMs * 2 ** (this.attempts - 1));
  }

  /** How many restarts in a row so far (1 after the first crash). */
  get attempt(): number {
    return this.attempts;
  }

  get maxAttempts(): number {
    return this.options.maxAttempts;
  }

  /** Forget the crash history (the user restarted by hand). */
  reset(): void {
    this.attempts = 0;
  }
}
