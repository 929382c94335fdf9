import { Logger } from '@nestjs/common';
import type { AppConfig } from '../config/config';
import { JobQueue } from './job-queue.service';

describe('JobQueue errors', () => {
  afterEach(() => jest.useRealTimers());

  it('logs one queue error per 30 s while they keep coming (a database outage), with how many were not logged', () => {
    jest.useFakeTimers({ now: new Date('2026-11-27T12:00:00Z') });
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const queue = new JobQueue({} as AppConfig, false);
    const report = (queue as unknown as { onQueueError(error: unknown): void }).onQueueError.bind(queue);
    for (let second = 0; second < 61; second++) {
      report(new Error('connect ECONNREFUSED'));
      report(new Error('connect ECONNREFUSED'));
      jest.advanceTimersByTime(1_000);
    }
    expect(warn.mock.calls.map(([fields]) => (fields as { errors_unlogged: number }).errors_unlogged)).toEqual([
      0, 59, 59,
    ]);
    warn.mockRestore();
  });
});
