/** What the analytics subgraph's run comparison thread (threads.ts) is started with: plain data, cloned into the thread. */
export interface AnalyticsThreadOptions {
  mongoUri: string;
  dbPrefix: string;
  logLevel: string;
  /** The process's tracing service name (lib/tracing.ts), so the thread's spans are told as its own; null: not traced. */
  tracingServiceName: string | null;
}
