import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterConnection, connectCluster } from '../engine/cluster/connection';
import {
  objectName,
  openSitePackages,
  type SitePackageBuckets,
  type SitePackageRecord,
} from '../engine/cluster/site-package-buckets';
import type { ListedPackage } from '../engine/packages/listing';
import type { Manifest } from '../engine/packages/manifest';
import { buildZapk } from '../engine/packages/zapk';
import type { TaskView } from '../engine/tasks/schema';
import { SiteEngine, startSite, stopSite } from './helpers/cluster-engines';
import { eventually, settled } from './helpers/eventually';
import { EXAMPLE_MANIFEST } from './helpers/example-package';
import { FIXTURES, VIDEO } from './helpers/fixtures';
import { NATS_PASSWORD, NATS_USER, NatsCluster } from './helpers/nats-cluster';

// A site of real engine processes on one real NATS server sharing one set of packages: the example
// package (the fixture COCO model) uploaded to one node, installed by the others from the site's
// object store, refused removal while a task anywhere uses it, and fetched by a node that joins later.
const EXAMPLE = 'coco-yolox-nano';
let nats: NatsCluster;
let engines: SiteEngine[];
let a: SiteEngine;
let b: SiteEngine;
const work = mkdtempSync(join(tmpdir(), 'vc-site-packages-'));
let exampleZapk: string;

/** The example package under another id and version, built here (model and labels from the fixtures). */
async function variant(zapkId: string, version: string): Promise<string> {
  const manifest = JSON.parse(readFileSync(EXAMPLE_MANIFEST, 'utf8')) as Manifest;
  const model = manifest.models['yolox-nano'];
  if (!model) throw new Error('the example manifest lost its model');
  model.file = join(FIXTURES, 'models', 'yolox_nano.onnx');
  model.labels = join(FIXTURES, 'models', 'coco-labels.txt');
  const dir = mkdtempSync(join(work, `${zapkId}-`));
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, zapk_id: zapkId, version }));
  const out = join(work, `${zapkId}-${version}.zapk`);
  await buildZapk(join(dir, 'manifest.json'), out);
  return out;
}

/** POST /api/zapk with the file; the envelope's code and message. */
async function upload(engine: SiteEngine, file: string): Promise<{ code: number; msg: string }> {
  const form = new FormData();
  form.append('file', new Blob([readFileSync(file)]), 'package.zapk');
  const answer = await fetch(`${engine.url}/api/zapk`, {
    method: 'POST',
    headers: { authorization: `Bearer ${engine.token}` },
    body: form,
    signal: AbortSignal.timeout(60_000),
  });
  return (await answer.json()) as { code: number; msg: string };
}

async function remove(engine: SiteEngine, zapkId: string): Promise<{ code: number; msg: string }> {
  const answer = await fetch(`${engine.url}/api/zapk/${zapkId}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${engine.token}` },
  });
  return (await answer.json()) as { code: number; msg: string };
}

/** The version of a package a node lists, or undefined. */
const versionOn = async (engine: SiteEngine, zapkId: string) =>
  (await engine.call<ListedPackage[]>('GET', '/api/zapk')).find((pkg) => pkg.zapk_id === zapkId)?.version;

/** Waits until every engine lists the package at `version` (undefined: lists it no more). */
const listedEverywhere = (on: readonly SiteEngine[], zapkId: string, version: string | undefined) =>
  settled(
    `${zapkId} ${version ?? 'gone'} on ${on.map((e) => e.name).join(', ')}`,
    async () => {
      for (const engine of on) {
        const listed = await versionOn(engine, zapkId);
        if (listed !== version) throw new Error(`${engine.name} lists ${zapkId} at ${listed}`);
      }
      return true;
    },
    60_000,
    250,
  );

beforeAll(async () => {
  nats = await NatsCluster.start(1);
  engines = await startSite(nats, 2, 'a', 'b');
  [a, b] = engines as [SiteEngine, SiteEngine];
  exampleZapk = join(work, 'example.zapk');
  await buildZapk(EXAMPLE_MANIFEST, exampleZapk);
}, 120_000);

afterAll(async () => {
  await stopSite(engines ?? []);
  await nats?.dispose();
  rmSync(work, { recursive: true, force: true });
});

describe('packages shared by the site', () => {
  let taskId = '';
  let c: SiteEngine;

  it('a package uploaded to one node is installed on the others, which run tasks with it', async () => {
    expect(await versionOn(b, EXAMPLE)).toBeUndefined();
    expect(await upload(a, exampleZapk)).toMatchObject({ code: 0 });
    await listedEverywhere([a, b], EXAMPLE, '1.0.0');
    const task = await b.call<TaskView>('POST', '/api/task', {
      name: 'shared package',
      zapk_id: EXAMPLE,
      app_ids: ['person'],
      video_url: VIDEO,
    });
    taskId = task.task_id;
    const analysed = await settled(
      'the task analysing on b',
      async () => {
        const view = await b.call<TaskView>('GET', `/api/task/${taskId}`);
        if (view.health.frames_analysed === 0) throw new Error(`${view.status}, no frame analysed`);
        return view;
      },
      60_000,
    );
    expect(analysed.status).toBe('running');
  }, 180_000);

  it('a package in use by a task on another node cannot be removed; once free it goes from every node', async () => {
    // The task runs on b (its site record says so once b shared it); a is asked.
    await settled('the task in the site', async () => {
      const tasks = await a.call<Array<{ task_id: string; status: string }>>('GET', '/api/cluster/tasks');
      if (!tasks.some((t) => t.task_id === taskId && t.status !== 'closed')) throw new Error('not yet');
      return true;
    });
    const refused = await remove(a, EXAMPLE);
    expect(refused.code).toBe(40901);
    expect(refused.msg).toContain(taskId);
    expect(await versionOn(a, EXAMPLE)).toBe('1.0.0');
    expect(await versionOn(b, EXAMPLE)).toBe('1.0.0');

    await b.call('DELETE', `/api/task/${taskId}`);
    const removed = await settled('the removal once the task closed', async () => {
      const answer = await remove(a, EXAMPLE);
      if (answer.code !== 0) throw new Error(`${answer.code} ${answer.msg}`);
      return answer;
    });
    expect(removed.code).toBe(0);
    await listedEverywhere([a, b], EXAMPLE, undefined);
  }, 120_000);

  it("a node started later installs the site's packages and brings its own in; the site's version wins", async () => {
    expect(await upload(b, exampleZapk)).toMatchObject({ code: 0 });
    await listedEverywhere([a, b], EXAMPLE, '1.0.0');
    // c comes with packages of its own: one the site lacks, and an older version of one it has.
    const own = await variant('coco-own', '2.0.0');
    const older = await variant(EXAMPLE, '0.9.0');
    c = new SiteEngine('c', mkdtempSync(join(tmpdir(), 'vc-site-c-')), nats.urls, [], {}, [
      '--install',
      own,
      '--install',
      older,
    ]);
    engines.push(c);
    await c.start();
    await listedEverywhere([a, b, c], 'coco-own', '2.0.0');
    await listedEverywhere([c], EXAMPLE, '1.0.0');
    expect(c.log).toContain("was replaced by the site's 1.0.0");
    expect(await versionOn(a, EXAMPLE)).toBe('1.0.0');
  }, 180_000);

  it('a node that restarts converges: what the site removed meanwhile goes, the rest is as the site holds it', async () => {
    await c.stop();
    expect(await remove(a, 'coco-own')).toMatchObject({ code: 0 });
    await listedEverywhere([a, b], 'coco-own', undefined);
    // Its --install files again: coco-own is there already, the older example replaces the site's.
    await c.start();
    await listedEverywhere([c], 'coco-own', undefined);
    await listedEverywhere([c], EXAMPLE, '1.0.0');
    // The node says so just after the uninstall the listing already shows.
    await eventually('the removal logged', () =>
      c.log.includes('package coco-own was removed from the site and is uninstalled here'),
    );
    expect(c.log).not.toContain('coco-own 2.0.0 of this node was brought into the site');
    expect(await versionOn(a, 'coco-own')).toBeUndefined();
  }, 180_000);

  it('uploads beyond those a node lets wait are refused with 503 50303, and change nothing', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => upload(a, exampleZapk)));
    const codes = answers.map((answer) => answer.code).sort();
    expect(codes).toContain(0);
    expect(codes).toContain(50303);
    expect(codes.every((code) => code === 0 || code === 50303)).toBe(true);
    await listedEverywhere([a, b, c], EXAMPLE, '1.0.0');
  }, 120_000);

  describe('a site object that is not what its record says', () => {
    let conn: ClusterConnection;
    let site: SitePackageBuckets;

    beforeAll(async () => {
      conn = await connectCluster(
        { servers: nats.urls, user: NATS_USER, password: NATS_PASSWORD },
        'tampering',
      );
      site = await openSitePackages(conn, 1);
    });
    afterAll(() => conn?.close());

    it('is installed on no node; the same object under its true digest is', async () => {
      const bytes = readFileSync(await variant('coco-tampered', '1.0.0'));
      const digest = createHash('sha256').update(bytes).digest('hex');
      const wrong = createHash('sha256').update('something else').digest('hex');
      const object = objectName('coco-tampered', wrong);
      await site.objects.putBlob({ name: object }, bytes);
      const record: SitePackageRecord = {
        zapk_id: 'coco-tampered',
        version: '1.0.0',
        digest: wrong,
        size: bytes.length,
        object,
        uploaded_by: 'tampering',
        uploaded_at: Date.now(),
      };
      await site.records.put('coco-tampered', JSON.stringify(record));
      await settled('both nodes refusing the object', async () => {
        for (const engine of [a, b])
          if (!/coco-tampered 1\.0\.0 of the site was not installed: its object has SHA-256/.test(engine.log))
            throw new Error(`${engine.name} did not say so yet`);
        return true;
      });
      expect(await versionOn(a, 'coco-tampered')).toBeUndefined();
      expect(await versionOn(b, 'coco-tampered')).toBeUndefined();

      await site.records.put('coco-tampered', JSON.stringify({ ...record, digest }));
      await listedEverywhere([a, b], 'coco-tampered', '1.0.0');
    }, 120_000);
  });
});
