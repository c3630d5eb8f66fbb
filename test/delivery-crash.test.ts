import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Outbox } from '../engine/callbacks/outbox';
import { OutboxRepository } from '../engine/callbacks/outbox-repository';
import { systemClock } from '../engine/clock';
import { EventBus } from '../engine/events/bus';
import { openDb } from '../engine/store/db';
import { type EngineProcess, spawnEngine } from './helpers/engine-process';
import { message, Receiver, range } from './helpers/receiver';

/**
 * Durability of the outbox against kill -9: 1,000 events are stored before the engine starts, the
 * engine process is killed mid-drain, and after a restart every event arrives, in order per task,
 * with at most the one event per task that was in flight at the kill arriving twice.
 */

const PASSWORD = 'crash-test-password';
const TASKS = 4;
const PER_TASK = 250;
const dataDir = mkdtempSync(join(tmpdir(), 'vc-crash-'));
const engines: EngineProcess[] = [];
let rx: Receiver | undefined;

afterAll(async () => {
  for (const engine of engines) engine.child.kill('SIGKILL');
  await rx?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function kill(engine: EngineProcess): Promise<void> {
  if (engine.child.exitCode !== null) return;
  const exited = new Promise((done) => engine.child.once('exit', done));
  engine.child.kill('SIGKILL');
  await exited;
}

describe('kill -9 with 1,000 events pending', () => {
  it('delivers all of them after a restart, in order per task', async () => {
    const receiver = await Receiver.start({ keepBodies: false });
    rx = receiver;
    // Slow enough that the kill comes with most of the backlog still pending.
    receiver.mode = { kind: 'slow', ms: 15 };
    const tasks = range(1, TASKS).map(() => randomUUID());

    const db = openDb(dataDir);
    const outbox = new Outbox(
      new OutboxRepository(db),
      { listedTaskIds: () => [] },
      systemClock,
      new EventBus(),
    );
    for (const i of range(1, PER_TASK))
      for (const task of tasks)
        outbox.enqueue({ task_id: task, report_url: receiver.url }, message(task, i, 64));
    db.close();

    const first = await spawnEngine(dataDir, PASSWORD);
    engines.push(first);
    await receiver.waitFor('200 deliveries', () => receiver.accepted.length >= 200, 60_000);
    await kill(first);
    const beforeKill = new Set(receiver.accepted.map((r) => r.event_id)).size;
    expect(beforeKill).toBeLessThan(700);

    const second = await spawnEngine(dataDir, PASSWORD);
    engines.push(second);
    await receiver.waitFor(
      'all 1,000 events',
      () => new Set(receiver.accepted.map((r) => r.event_id)).size === TASKS * PER_TASK,
      60_000,
    );
    await kill(second);

    for (const task of tasks) {
      const seqs = receiver.accepted.filter((r) => r.task_id === task).map((r) => r.seq);
      // A repeat may only be the event in flight at the kill, sent again right after the restart.
      const collapsed = seqs.filter((seq, i) => i === 0 || seq !== seqs[i - 1]);
      expect(collapsed).toEqual(range(1, PER_TASK));
      expect(seqs.length - collapsed.length).toBeLessThanOrEqual(1);
    }
  });
});
