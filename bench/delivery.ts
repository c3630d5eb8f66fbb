import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Outbox } from '../engine/callbacks/outbox';
import { OutboxRepository } from '../engine/callbacks/outbox-repository';
import { systemClock } from '../engine/clock';
import { EventBus } from '../engine/events/bus';
import { openDb } from '../engine/store/db';
import { spawnEngine } from '../test/helpers/engine-process';
import { message, Receiver } from '../test/helpers/receiver';

/**
 * Callback delivery throughput: a backlog is stored in the outbox before the engine starts, then
 * the engine (its own process, as deployed) drains it to a fast receiver on loopback that answers
 * 200 at once. Every event must arrive, in order per task, or the run fails.
 */

const PASSWORD = 'bench-admin-password';

interface Scenario {
  name: string;
  events: number;
  tasks: number;
  imageChars: number;
}

const SCENARIOS: Scenario[] = [
  { name: '10k backlog, 1 task, no snapshot', events: 10_000, tasks: 1, imageChars: 0 },
  { name: '10k backlog, 10 tasks, no snapshot', events: 10_000, tasks: 10, imageChars: 0 },
  { name: '10k backlog, 100 tasks, no snapshot', events: 10_000, tasks: 100, imageChars: 0 },
  { name: '1k backlog, 10 tasks, 100 KB snapshot', events: 1_000, tasks: 10, imageChars: 100_000 },
];

interface Row {
  scenario: string;
  events: number;
  'engine start s': number;
  'drain s': number;
  'events/s': number;
  'MB/s': number;
}

async function run(scenario: Scenario): Promise<Row> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vc-bench-delivery-'));
  const receiver = await Receiver.start({ keepBodies: false });
  try {
    const tasks = Array.from({ length: scenario.tasks }, () => randomUUID());
    const db = openDb(dataDir);
    const outbox = new Outbox(
      new OutboxRepository(db),
      { listedTaskIds: () => [] },
      systemClock,
      new EventBus(),
    );
    const perTask = scenario.events / scenario.tasks;
    let bytes = 0;
    // One transaction for the whole backlog: filling it is not what is measured, and no worker runs yet.
    db.transaction(() => {
      for (let i = 1; i <= perTask; i++) {
        for (const task of tasks) {
          const event = message(task, i, Math.max(1, scenario.imageChars));
          bytes += JSON.stringify(outbox.enqueue({ task_id: task, report_url: receiver.url }, event)).length;
        }
      }
    })();
    db.close();

    const spawned = performance.now();
    let firstAt = 0;
    void receiver
      .waitFor('the first event', () => receiver.requests.length > 0, 120_000)
      .then(() => {
        firstAt = performance.now();
      });
    const engine = await spawnEngine(dataDir, PASSWORD);
    try {
      await receiver.waitFor(
        `${scenario.events} events`,
        () => receiver.accepted.length >= scenario.events,
        600_000,
      );
    } finally {
      engine.child.kill('SIGKILL');
    }
    const doneAt = performance.now();
    check(receiver, tasks, perTask);
    const drainS = (doneAt - firstAt) / 1000;
    return {
      scenario: scenario.name,
      events: scenario.events,
      'engine start s': round((firstAt - spawned) / 1000),
      'drain s': round(drainS),
      'events/s': Math.round(scenario.events / drainS),
      'MB/s': round(bytes / 1e6 / drainS),
    };
  } finally {
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A benchmark of wrong deliveries measures nothing: each task's events arrive once, in seq order. */
function check(receiver: Receiver, tasks: string[], perTask: number): void {
  for (const task of tasks) {
    const seqs = receiver.accepted.filter((r) => r.task_id === task).map((r) => r.seq);
    if (seqs.length !== perTask || seqs.some((seq, i) => seq !== i + 1))
      throw new Error(`task ${task}: got ${seqs.length} events, not 1..${perTask} in order`);
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

export async function benchDelivery(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const scenario of SCENARIOS) rows.push(await run(scenario));
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await benchDelivery();
  console.log(
    '\nCallback delivery: stored backlog drained by the engine (own process) to a loopback receiver',
  );
  console.table(rows);
}
