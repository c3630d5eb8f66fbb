import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditPage } from '../engine/audit/audit-schema';
import { systemClock } from '../engine/clock';
import { connectCluster } from '../engine/cluster/connection';
import { readChain } from '../engine/cluster/event-chain';
import {
  MAX_EDIT_TRIES,
  openSiteRules,
  ruleKey,
  type SiteRuleRecord,
  SiteRules,
} from '../engine/cluster/site-rules';
import type { ListedPackage } from '../engine/packages/listing';
import { PackagesRepository } from '../engine/packages/packages-repository';
import { PackageRegistry } from '../engine/packages/registry';
import { openDb } from '../engine/store/db';
import type { TaskView } from '../engine/tasks/schema';
import { fileCamera, SiteEngine, siteOf, startSite, stopSite } from './helpers/cluster-engines';
import { settled } from './helpers/eventually';
import { BUILTIN_PACKAGE_DIR } from './helpers/fixtures';
import { NATS_PASSWORD, NATS_USER, NatsCluster } from './helpers/nats-cluster';

// A site of real engine processes on one real NATS server: the built-in motion app's rule edited on
// one node reaches the others (their cameras fire by it), two nodes editing it at once lose nothing,
// a node that starts later (a workstation with an edit of its own) takes the site's; and a closed
// task is purged from a node that does not hold it.
let nats: NatsCluster;
let engines: SiteEngine[];
let a: SiteEngine;
let b: SiteEngine;
const MOTION = '/api/zapk/builtin/app/motion';

/** PUT 4.3 on a node; the envelope's code and message. */
async function edit(engine: SiteEngine, body: unknown): Promise<{ code: number; msg: string }> {
  const answer = await fetch(`${engine.url}${MOTION}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${engine.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return (await answer.json()) as { code: number; msg: string };
}

async function call(engine: SiteEngine, method: string, path: string) {
  const answer = await fetch(`${engine.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${engine.token}` },
    signal: AbortSignal.timeout(20_000),
  });
  return {
    status: answer.status,
    body: (await answer.json()) as { code: number; msg: string; data: unknown },
  };
}

/** The motion app as a node lists it (4.2). */
async function motionOn(engine: SiteEngine) {
  const packages = await engine.call<ListedPackage[]>('GET', '/api/zapk');
  const app = packages.find((pkg) => pkg.zapk_id === 'builtin')?.apps.motion;
  if (!app) throw new Error(`${engine.name} lists no motion app`);
  return app;
}

/** The site's record of the motion app, as the site's NATS servers hold it. */
async function siteRecord(): Promise<SiteRuleRecord> {
  const conn = await connectCluster(
    { servers: nats.urls, user: NATS_USER, password: NATS_PASSWORD },
    'checker',
  );
  try {
    const entry = await (await openSiteRules(conn, 1)).get(ruleKey('builtin', 'motion'));
    if (entry?.operation !== 'PUT') throw new Error('the site has no record of the motion app');
    return entry.json<SiteRuleRecord>();
  } finally {
    await conn.close();
  }
}

/** The object names of each event in the task's chain, in chain order. */
async function namesInChain(taskId: string): Promise<string[][]> {
  const conn = await connectCluster(
    { servers: nats.urls, user: NATS_USER, password: NATS_PASSWORD },
    'checker',
  );
  try {
    return (await readChain(conn, taskId, 0, 100_000)).flatMap(({ entry }) =>
      entry.kind === 'event' && entry.body.event === 'message'
        ? [entry.body.data.rules.flatMap((rule) => rule.objects.map((object) => object.name))]
        : [],
    );
  } finally {
    await conn.close();
  }
}

const classEntry = (name: string) => ({
  class_id: '0',
  name,
  color: '#ffcc00',
  threshold: 0.5,
  min_pixel: 16,
  max_pixel: 0,
});

beforeAll(async () => {
  nats = await NatsCluster.start(1);
  engines = await startSite(nats, 2, 'a', 'b');
  [a, b] = engines as [SiteEngine, SiteEngine];
}, 120_000);

afterAll(async () => {
  await stopSite(engines ?? []);
  await nats?.dispose();
});

describe("the apps' rules of a site", () => {
  it('an edit on one node applies on every node: a camera of the app on another node fires by the new rule', async () => {
    const camera = await fileCamera(a, 'rules camera');
    const owner = await settled('the camera placed', async () => {
      const node = (await siteOf(a)).assignments[camera.task_id]?.node;
      if (!node) throw new Error('not assigned yet');
      return node;
    });
    const [runner, editor] = owner === 'a' ? [a, b] : [b, a];
    // It fires by the manifest's rule first: its objects are named "motion".
    await settled(
      'an event by the old rule',
      async () => {
        const names = await namesInChain(camera.task_id);
        if (!names.some((event) => event.includes('motion'))) throw new Error(`${names.length} events`);
        return true;
      },
      60_000,
    );

    const answer = await edit(editor, {
      name: 'Motion (edited on the site)',
      rule: { interval: 1, classes: [classEntry('site-motion')] },
    });
    expect(answer).toMatchObject({ code: 0 });
    // The node that took the edit applied it before it answered.
    expect((await motionOn(editor)).name).toBe('Motion (edited on the site)');
    for (const engine of [a, b]) {
      const app = await settled(`the edit on ${engine.name}`, async () => {
        const listed = await motionOn(engine);
        if (listed.name !== 'Motion (edited on the site)') throw new Error(listed.name);
        return listed;
      });
      expect(app.rule.interval).toBe(1);
      expect(app.rule.classes?.['0']?.name).toBe('site-motion');
    }
    // The running camera on the other node reloads its app: its next events name the edited class.
    const before = (await namesInChain(camera.task_id)).length;
    const after = await settled(
      'an event by the new rule',
      async () => {
        const names = (await namesInChain(camera.task_id)).slice(before);
        if (!names.some((event) => event.includes('site-motion'))) throw new Error(`${names.length} events`);
        return names;
      },
      60_000,
    );
    // Once one event named the edited class, none named the old one after it.
    const first = after.findIndex((event) => event.includes('site-motion'));
    expect(after.slice(first).flat()).not.toContain('motion');
    expect(runner.log).toContain("now runs the site's rule");
    await call(runner, 'DELETE', `/api/task/${camera.task_id}`);
  }, 180_000);

  it('two nodes editing the app at the same moment: each edit is laid over the one that won, none lost or half-applied', async () => {
    for (let round = 1; round <= 6; round += 1) {
      // Four edits at once, two on each node, each of its own rule field and naming the app after itself.
      const edits = [
        { on: a, name: `a1-${round}`, rule: { interval: round } },
        {
          on: b,
          name: `b1-${round}`,
          rule: { class_area: { color: `#0000${String(round).padStart(2, '0')}` } },
        },
        { on: a, name: `a2-${round}`, rule: { inertia: { hits: 1, frames: round + 1 } } },
        { on: b, name: `b2-${round}`, rule: { stationary: round % 2 === 0 ? 'once' : 'always' } },
      ];
      const before = await motionOn(a);
      const answers = await Promise.all(edits.map(({ on, name, rule }) => edit(on, { name, rule })));
      for (const answer of answers) expect([0, 40908]).toContain(answer.code);
      const won = edits.filter((_, i) => answers[i]?.code === 0);
      expect(won.length).toBeGreaterThan(0);
      // Every edit was answered once stored: the site's record holds every edit answered 0 and
      // nothing of a refused one, named after the last winner.
      const record = await siteRecord();
      expect(won.map((w) => w.name)).toContain(record.name);
      const answered = (name: string) => won.some((w) => w.name === name);
      expect(record.rule.interval).toBe(answered(`a1-${round}`) ? round : before.rule.interval);
      expect(record.rule.class_area).toEqual(
        answered(`b1-${round}`)
          ? { color: `#0000${String(round).padStart(2, '0')}` }
          : before.rule.class_area,
      );
      expect(record.rule.inertia).toEqual(
        answered(`a2-${round}`) ? { hits: 1, frames: round + 1 } : before.rule.inertia,
      );
      expect(record.rule.stationary).toEqual(
        answered(`b2-${round}`) ? (round % 2 === 0 ? 'once' : 'always') : before.rule.stationary,
      );
      // And every node applies that record whole.
      for (const engine of [a, b]) {
        const app = await settled(`round ${round} on ${engine.name}`, async () => {
          const listed = await motionOn(engine);
          if (listed.name !== record.name) throw new Error(`named ${listed.name}`);
          return listed;
        });
        expect(app.rule).toMatchObject({
          interval: record.rule.interval,
          class_area: record.rule.class_area,
          inertia: record.rule.inertia,
          stationary: record.rule.stationary,
        });
      }
    }
  }, 240_000);

  it("a node that starts later has the site's rule: a workstation's own edit gives way, logged", async () => {
    const site = await motionOn(a);
    // c first edits the app as a node of another site (its own database holds that edit), then joins this one.
    const other = await NatsCluster.start(1);
    const dataDir = mkdtempSync(join(tmpdir(), 'vc-site-c-'));
    let c = new SiteEngine('c', dataDir, other.urls);
    try {
      await c.start();
      expect(await edit(c, { name: 'Motion of c', rule: { interval: 42 } })).toMatchObject({ code: 0 });
      expect((await motionOn(c)).rule.interval).toBe(42);
      await c.stop();
    } finally {
      await other.dispose();
    }
    c = new SiteEngine('c', dataDir, nats.urls);
    engines.push(c);
    await c.start();
    const joined = await settled("the site's rule on c", async () => {
      const app = await motionOn(c);
      if (app.name !== site.name) throw new Error(`named ${app.name}`);
      return app;
    });
    expect(joined).toEqual(site);
    expect(c.log).toContain("this node's own edit of app builtin.motion was replaced by the site's");
    // Its built-in package restored (the manifest's rules again), it takes the site's rule back.
    await c.call('POST', '/api/zapk/builtin/restore');
    const restored = await settled("the site's rule on c after a restore", async () => {
      const app = await motionOn(c);
      if (app.name !== site.name) throw new Error(`named ${app.name}`);
      return app;
    });
    expect(restored).toEqual(site);
  }, 180_000);
});

describe('a closed task purged from any node', () => {
  it('a node that does not hold the closed task purges it (the holder does), and audits it', async () => {
    const camera = await fileCamera(a, 'to purge');
    // Placed, as both nodes see it.
    const holder = await settled('the camera placed', async () => {
      const [onA, onB] = await Promise.all(
        [a, b].map(async (e) => (await siteOf(e)).assignments[camera.task_id]?.node),
      );
      if (!onA || onA !== onB) throw new Error(`assigned to ${onA} on a, ${onB} on b`);
      return onA;
    });
    const [held, other] = holder === 'a' ? [a, b] : [b, a];
    expect((await call(other, 'DELETE', `/api/task/${camera.task_id}`)).body.code).toBe(0);
    await settled('closed', async () => {
      const view = await held.call<TaskView>('GET', `/api/task/${camera.task_id}`);
      if (view.status !== 'closed') throw new Error(view.status);
      return true;
    });
    // Closed, it has no assignment (as every node sees it): nothing but the site's definition says where it is.
    await settled('unassigned', async () => {
      for (const engine of [a, b])
        if ((await siteOf(engine)).assignments[camera.task_id]) throw new Error(`assigned on ${engine.name}`);
      return true;
    });
    // The other node lists it (the site's definition) and answers for it though it stores nothing of it.
    const listed = await settled('listed on the other node', async () => {
      const page = await other.call<TaskView[]>('GET', '/api/tasks?state=closed&limit=100');
      if (!page.some((t) => t.task_id === camera.task_id)) throw new Error('not listed');
      return true;
    });
    expect(listed).toBe(true);
    const read = await other.call<TaskView>('GET', `/api/task/${camera.task_id}`);
    expect([read.task_id, read.status]).toEqual([camera.task_id, 'closed']);
    const purged = await call(other, 'DELETE', `/api/task/${camera.task_id}?purge=true`);
    expect(purged.status).toBe(200);
    expect(purged.body).toMatchObject({ code: 0, data: { task_id: camera.task_id, purged: true } });
    // Gone from the node that held it, and from the site's listing on every node.
    expect((await call(held, 'GET', `/api/task/${camera.task_id}`)).body.code).toBe(40401);
    for (const engine of [a, b])
      await settled(`unlisted on ${engine.name}`, async () => {
        const page = await engine.call<TaskView[]>('GET', '/api/tasks?state=closed&limit=100');
        if (page.some((t) => t.task_id === camera.task_id)) throw new Error('still listed');
        return true;
      });
    // Purged again, or a task the site never had: 404 on any node.
    expect((await call(other, 'DELETE', `/api/task/${camera.task_id}?purge=true`)).body.code).toBe(40401);
    expect(
      (await call(other, 'DELETE', '/api/task/8c3a4a34-0b1e-4f57-9c55-5c6c2d1b7a10?purge=true')).body.code,
    ).toBe(40401);
    // The audit line is on the node that took the request.
    const audit = await other.call<AuditPage>('GET', `/api/audit?action=task.purge&target=${camera.task_id}`);
    expect(audit.items.map((entry) => [entry.status, entry.code])).toContainEqual([200, 0]);
  }, 180_000);
});

describe('an edit that loses every try', () => {
  it(`is refused with 40908 after ${MAX_EDIT_TRIES} tries, nothing of it applied`, async () => {
    const servers = { servers: nats.urls, user: NATS_USER, password: NATS_PASSWORD };
    const [conn, rival] = await Promise.all([
      connectCluster(servers, 'loser'),
      connectCluster(servers, 'rival'),
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'vc-site-rules-loser-'));
    const db = openDb(dir);
    try {
      const registry = new PackageRegistry(new PackagesRepository(db), systemClock, dir, () => false);
      await registry.installDir(BUILTIN_PACKAGE_DIR, true);
      const before = registry.app('builtin', 'motion');
      const [bucket, rivalBucket] = await Promise.all([openSiteRules(conn, 1), openSiteRules(rival, 1)]);
      const key = ruleKey('builtin', 'motion');
      // Another writer, on a connection of its own, edits the app between each read and write of this node's edit.
      let rivalEdits = 0;
      const raced = new Proxy(bucket, {
        get(target, name) {
          if (name === 'update' || name === 'create')
            return async (...args: [string, string, number]) => {
              rivalEdits += 1;
              const record: SiteRuleRecord = {
                zapk_id: 'builtin',
                app_id: 'motion',
                name: `rival ${rivalEdits}`,
                rule: before.rule,
                edited_by: 'rival',
                edited_at: Date.now(),
              };
              await rivalBucket.put(key, JSON.stringify(record));
              return name === 'update' ? target.update(...args) : target.create(args[0], args[1]);
            };
          const value = Reflect.get(target, name, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const log = pino({ level: 'silent' });
      const loser = new SiteRules(raced, { node: 'loser', registry, log });
      await expect(
        loser.edit('builtin', 'motion', { name: 'lost', rule: { interval: 77 } }),
      ).rejects.toMatchObject({ kind: 'cluster.app_edit_conflict' });
      expect(rivalEdits).toBe(MAX_EDIT_TRIES);
      // Nothing of it here, nothing of it in the site: the last rival's record is whole.
      expect(registry.app('builtin', 'motion')).toMatchObject({ name: before.name, rule: before.rule });
      const stored = (await bucket.get(key))?.json<SiteRuleRecord>();
      expect(stored?.name).toBe(`rival ${MAX_EDIT_TRIES}`);
      expect(stored?.rule.interval).not.toBe(77);
      // Unraced, the same edit goes through, laid over the rival's record, and applies here.
      await new SiteRules(bucket, { node: 'loser', registry, log }).edit('builtin', 'motion', {
        name: 'won',
        rule: { interval: 77 },
      });
      expect(registry.app('builtin', 'motion')).toMatchObject({ name: 'won', rule: { interval: 77 } });
      expect((await bucket.get(key))?.json<SiteRuleRecord>()).toMatchObject({
        name: 'won',
        edited_by: 'loser',
      });
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
      await Promise.all([conn.close(), rival.close()]);
    }
  });
});
