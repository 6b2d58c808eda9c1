import { randomUUID } from 'node:crypto';
import type { ApolloServerPlugin } from '@apollo/server';
import type { NextFunction, Request, Response } from 'express';
import type { GatewayContext } from './context';
import { subgraphFetch, type FetcherRequestInit, type FetcherResponse } from './subgraph-fetch';

/**
 * Every GraphQL request has a deadline. When it passes, or the client goes away, the request's subgraph fetches
 * are aborted (the subgraphs see the connection close), the identity tokens minted for it carry the same deadline
 * (subgraphs bound their MongoDB reads with maxTimeMS), and a request cut by its deadline answers 504 TIMEOUT.
 * Writes are not abandoned half-way: a subgraph finishes a write it has started (a batch is written slice by slice,
 * so part of it may be visible before the rest), so a mutation answered 504 may have been applied, wholly or not yet
 * wholly, and retrying it with the same idempotency key or version is safe.
 */
export interface RequestDeadline {
  /** Epoch milliseconds. */
  at: number;
  timeoutMs: number;
  signal: AbortSignal;
  /** Names this request to the subgraph fetcher; never leaves the gateway. */
  key: string;
}

export class DeadlineExceeded extends Error {}
export class ClientWentAway extends Error {}

/** Carries the request key from willSendRequest to the fetcher, which removes it. */
export const REQUEST_KEY_HEADER = 'x-linepack-request-key';

const signals = new Map<string, AbortSignal>();

export function deadlineMiddleware(timeoutMs: number) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const { deadline, abort, end } = startDeadline(timeoutMs);
    res.once('finish', end);
    res.once('close', () => {
      if (!res.writableFinished) abort(new ClientWentAway('the client closed the connection'));
      end();
    });
    res.locals['deadline'] = deadline;
    next();
  };
}

/**
 * A deadline at `at` (epoch ms; default `timeoutMs` from now) whose signal aborts the subgraph fetches made under it;
 * `end` forgets it once its request is answered. The expensive-operation lane (expensive-lane.ts) gives the request
 * it runs the deadline the gateway set, and aborts it when the gateway says the client went away.
 */
export function startDeadline(timeoutMs: number, at = Date.now() + timeoutMs): { deadline: RequestDeadline; abort(reason: Error): void; end(): void } {
  const controller = new AbortController();
  const key = randomUUID();
  const timer = setTimeout(() => controller.abort(new DeadlineExceeded(`deadline of ${timeoutMs} ms passed`)), Math.max(0, at - Date.now()));
  signals.set(key, controller.signal);
  return {
    deadline: { at, timeoutMs, signal: controller.signal, key },
    abort: (reason) => controller.abort(reason),
    end: () => {
      clearTimeout(timer);
      signals.delete(key);
    },
  };
}

/** The subgraph fetcher (subgraph-fetch.ts), aborted with the request it serves. */
export function fetchWithDeadline(url: string, init: FetcherRequestInit = {}): Promise<FetcherResponse> {
  const headers: Record<string, string> = { ...init.headers };
  const key = headers[REQUEST_KEY_HEADER];
  delete headers[REQUEST_KEY_HEADER];
  const signal = key ? signals.get(key) : undefined;
  return subgraphFetch(url, { ...init, headers, ...(signal ? { signal } : {}) });
}

/** A response whose subgraph work was cut by the deadline becomes 504 TIMEOUT instead of a partial result. */
export function deadlinePlugin(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          const { signal, timeoutMs } = contextValue.deadline;
          if (!signal.aborted || !(signal.reason instanceof DeadlineExceeded) || response.body.kind !== 'single') return;
          response.http.status = 504;
          response.body.singleResult = {
            errors: [
              {
                message: `the request did not finish within ${timeoutMs / 1000} s and was stopped; a mutation may have been applied, and retrying it with the same idempotency key or version is safe`,
                extensions: { code: 'TIMEOUT' },
              },
            ],
          };
        },
      };
    },
  };
}
