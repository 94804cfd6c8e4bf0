import type { TestingModuleBuilder } from '@nestjs/testing';
import Redis from 'ioredis';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connectRedis, REDIS_CLIENT } from '../../src/redis/redis-client';
import { until } from './until';

/** The Redis of the test run (.ci/run starts one on 6379), shared with other files and runs. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix of one test file in one run, so that those sharing a Redis never meet. */
export function uniqueKeyPrefix(): string {
  return `test:${process.env.TEST_RUN_ID}:${randomBytes(6).toString('hex')}:`;
}

/** For createTestApp's `customize`: the app's own Redis connection, every key under `prefix`. */
export function useRedisKeyPrefix(url: string, prefix: string) {
  return (builder: TestingModuleBuilder): void => {
    builder
      .overrideProvider(REDIS_CLIENT)
      .useFactory({ factory: () => connectRedis(url, { keyPrefix: prefix }) });
  };
}

/** A redis-server child process of the test, on a port of its own, that the test stops and starts. */
export class ThrowawayRedis {
  private process: ChildProcess | undefined;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    // No persistence: a restarted server is empty, as after losing its data.
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.process = child;
    let failure: Error | undefined;
    child.once('error', (error) => (failure = error));
    await until(`redis-server on port ${this.port}`, () => {
      if (failure) throw failure;
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      return this.answers();
    });
  }

  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }

  private async answers(): Promise<boolean> {
    const probe = new Redis(this.url, { lazyConnect: true, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      // Not after a failed attempt: ioredis would then wait 2 s on the dead socket.
      if (probe.status !== 'end') probe.disconnect();
    }
  }
}
