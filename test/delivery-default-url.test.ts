import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventItem } from '../engine/events/delivery';
import { type Answer, startTestEngine, type TestEngine } from './helpers/engine';
import { Receiver } from './helpers/receiver';

/**
 * The site-wide callback URL (extension, PUT /api/settings/callbacks): tasks started without a
 * report_url deliver there, a task's own report_url wins, the URL is checked as a task's is, and the
 * setting survives a restart. Real HTTP receivers on loopback, real tasks closed through the API.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'vc-default-url-'));
let t: TestEngine;
let site: Receiver;
let own: Receiver;

beforeAll(async () => {
  t = await startTestEngine(dataDir);
  site = await Receiver.start();
  own = await Receiver.start();
});
afterAll(async () => {
  await t?.stop();
  await site?.close();
  await own?.close();
});

function data(answer: Answer): unknown {
  expect(answer.body.msg, JSON.stringify(answer.body)).toBe('success');
  return answer.body.data;
}

async function imageTask(reportUrl?: string): Promise<string> {
  const body = {
    mode: 'image',
    zapk_id: 'builtin',
    app_ids: ['motion'],
    ...(reportUrl && { report_url: reportUrl }),
  };
  return (data(await t.call('POST', '/api/task', { json: body })) as { task_id: string }).task_id;
}

/** Starts and closes a task: its task_closed event goes where its callbacks go. */
async function closedTask(reportUrl?: string): Promise<string> {
  const task = await imageTask(reportUrl);
  data(await t.call('DELETE', `/api/task/${task}`));
  return task;
}

const states = async (task: string) =>
  (data(await t.call('GET', `/api/task/${task}/events`)) as { items: EventItem[] }).items.map((e) => [
    e.event,
    e.state,
  ]);

describe('the site-wide callback URL', () => {
  it('is unset at first: a task without report_url has no receiver', async () => {
    expect(data(await t.call('GET', '/api/settings/callbacks'))).toEqual({ default_report_url: '' });
    const task = await closedTask();
    expect(await states(task)).toEqual([['task_closed', 'no_receiver']]);
  });

  it('refuses what a task’s report_url refuses, naming the field and changing nothing', async () => {
    for (const url of ['ftp://127.0.0.1/x', 'not a url', '/relative/path', 'javascript:alert(1)']) {
      const answer = await t.call('PUT', '/api/settings/callbacks', { json: { default_report_url: url } });
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 40001 });
      expect(answer.body.msg).toMatch(/^body\.default_report_url: must be an (absolute )?http/);
    }
    for (const json of [
      {},
      { default_report_url: 'http://a/', extra: 1 },
      { default_report_url: 'x'.repeat(2049) },
    ]) {
      const answer = await t.call('PUT', '/api/settings/callbacks', { json });
      expect(answer.body.code).toBe(40001);
    }
    expect(data(await t.call('GET', '/api/settings/callbacks'))).toEqual({ default_report_url: '' });
  });

  it('takes the events of tasks without a report_url; a task’s own URL wins', async () => {
    expect(
      data(await t.call('PUT', '/api/settings/callbacks', { json: { default_report_url: site.url } })),
    ).toEqual({ default_report_url: site.url });
    const plain = await closedTask();
    const owned = await closedTask(own.url);
    await site.waitFor('the plain task’s close', () => site.accepted.some((r) => r.task_id === plain));
    await own.waitFor('the owned task’s close', () => own.accepted.some((r) => r.task_id === owned));
    expect(site.accepted.find((r) => r.task_id === plain)?.body).toMatchObject({
      event: 'task_closed',
      task_id: plain,
      seq: 1,
    });
    expect(site.requests.some((r) => r.task_id === owned)).toBe(false);
    expect(own.requests.some((r) => r.task_id === plain)).toBe(false);
    expect(await states(plain)).toEqual([['task_closed', 'delivered']]);
    // The contract's task view is unchanged: the task itself still has no report_url.
    const view = data(await t.call('GET', `/api/task/${plain}`)) as { report_url: string };
    expect(view.report_url).toBe('');
  });

  it('is audited, and kept across a restart', async () => {
    const audit = data(await t.call('GET', '/api/audit?action=settings.callbacks')) as {
      items: { action: string; code: number }[];
    };
    expect(audit.items.map((item) => item.action)).toContain('settings.callbacks');
    // The same data dir (stop() would delete it).
    await t.engine.close();
    t = await startTestEngine(dataDir);
    expect(data(await t.call('GET', '/api/settings/callbacks'))).toEqual({ default_report_url: site.url });
    // "" clears it: the next task without report_url has no receiver again.
    data(await t.call('PUT', '/api/settings/callbacks', { json: { default_report_url: '' } }));
    const task = await closedTask();
    expect(await states(task)).toEqual([['task_closed', 'no_receiver']]);
  });
});
