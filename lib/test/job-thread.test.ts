/**
 * A job runner's (or run comparison worker's) thread starts with its first work (lib/job-thread.ts): a replica that
 * never queues a job never pays for the thread, and one that finds work in the database — queued by another replica, or
 * left by one that died — starts it without being woken. A real worker thread; the database's answer is the test's
 * `hasWork`, so "no work yet" and "work now" are facts the test sets, never waits it guesses.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import { WakeableWorkThread } from '../job-thread';
import { createLogger } from '../logger';

/** The thread's reports, in order, and a way to wait for the next one. */
function threadReports(channel: string) {
  const reports: string[] = [];
  const waiting: (() => void)[] = [];
  const listener = new BroadcastChannel(channel);
  listener.onmessage = (message) => {
    reports.push((message as { data: string }).data);
    for (const resolve of waiting.splice(0)) resolve();
  };
  return {
    reports,
    /** Resolves once the thread has reported `report` `times` times. */
    async next(report: string, times = 1): Promise<void> {
      while (reports.filter((r) => r === report).length < times) await new Promise<void>((resolve) => waiting.push(resolve));
    },
    /** Makes the thread exit, as a thread that failed does. */
    crash: () => listener.postMessage('crash'),
    close: () => listener.close(),
  };
}

function workThread(hasWork: () => Promise<boolean>) {
  const channel = `job-thread-test:${randomUUID()}`;
  const thread = new WakeableWorkThread({
    what: 'the test’s work thread',
    meanwhile: 'nothing',
    entry: { file: path.join(__dirname, 'fixtures', 'wakeable-work-thread.ts'), execArgv: ['--import', 'tsx'] },
    workerData: { channel },
    logger: createLogger('test', 'silent'),
    hasWork,
  });
  return { thread, reports: threadReports(channel) };
}

/** Resolves on the `n`th call of the returned `hasWork`, which answers `answer(call)`. */
function countedLooks(answer: (call: number) => boolean) {
  let calls = 0;
  const waiting = new Map<number, () => void>();
  return {
    hasWork: async () => {
      calls++;
      waiting.get(calls)?.();
      return answer(calls);
    },
    reached: (n: number) => new Promise<void>((resolve) => (calls >= n ? resolve() : waiting.set(n, resolve))),
  };
}

it('does not start the thread while the database has no work for it', async () => {
  const looks = countedLooks(() => false);
  const { thread, reports } = workThread(looks.hasWork);
  thread.start();
  try {
    // The first look is at once, the next after 0.5 s: two looks, both empty.
    await looks.reached(2);
    expect(thread.started).toBe(false);
  } finally {
    await thread.stop();
    reports.close();
  }
  expect(reports.reports).toEqual([]);
});

it('starts the thread when a look finds work no one here queued (another replica’s, or a dead runner’s)', async () => {
  const looks = countedLooks((call) => call >= 2);
  const { thread, reports } = workThread(looks.hasWork);
  thread.start();
  try {
    await reports.next('started');
    expect(thread.started).toBe(true);
    // Then the thread looks for itself; the loop has stopped asking.
    thread.wake();
    await reports.next('woken');
    await thread.stop();
    await reports.next('stopped');
  } finally {
    await thread.stop();
    reports.close();
  }
  expect(reports.reports).toEqual(['started', 'woken', 'stopped']);
});

it('starts the thread at once when work is queued here, before any look found it', async () => {
  const looks = countedLooks(() => false);
  const { thread, reports } = workThread(looks.hasWork);
  thread.start();
  try {
    await looks.reached(1);
    thread.wake();
    await reports.next('started');
    expect(thread.started).toBe(true);
    await thread.stop();
    await reports.next('stopped');
  } finally {
    await thread.stop();
    reports.close();
  }
  expect(reports.reports).toEqual(['started', 'stopped']);
});

it('starts the thread again after it died, as every background thread is', async () => {
  const looks = countedLooks(() => true);
  const { thread, reports } = workThread(looks.hasWork);
  thread.start();
  try {
    await reports.next('started');
    reports.crash();
    await reports.next('started', 2);
    thread.wake();
    await reports.next('woken');
  } finally {
    await thread.stop();
    reports.close();
  }
});

it('never starts a thread once stopped, even with a look under way that finds work', async () => {
  let answer: (found: boolean) => void = () => {};
  let lookBegun: () => void = () => {};
  const asked = new Promise<void>((resolve) => (lookBegun = resolve));
  const { thread, reports } = workThread(
    () =>
      new Promise<boolean>((resolve) => {
        answer = resolve;
        lookBegun();
      }),
  );
  thread.start();
  await asked;
  const stopped = thread.stop();
  answer(true);
  await stopped;
  expect(thread.started).toBe(false);
  reports.close();
  expect(reports.reports).toEqual([]);
});
