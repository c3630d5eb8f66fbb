import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { presetSession } from './helpers/browser';
import { type SiteEngine, siteOf, startSite, stopSite } from './helpers/cluster-engines';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { settled } from './helpers/eventually';
import { VIDEO } from './helpers/fixtures';
import { NatsCluster } from './helpers/nats-cluster';

/*
 * The console's view of a site in Chromium: one real NATS server and one engine started through the
 * CLI with --cluster (serving the built console of `npm run build`), one camera on it; and, beside it,
 * a single workstation, whose System page has no Site section.
 */

/** How long the page may take to show something (a loaded machine is slow, never wrong). */
const POLL = { timeout: 30_000 };

let nats: NatsCluster;
let engines: SiteEngine[];
let single: ConsoleEngine;
let browser: Browser;
let task: TaskView;

/** A signed-in page of the console at `url`; `before` runs once the page exists, before it loads. */
async function open(
  { url, token }: { url: string; token: string },
  path: string,
  before?: (page: Page) => void,
): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await presetSession(page, token, { language: 'en' });
  before?.(page);
  await page.goto(`${url}/#${path}`);
  return page;
}

beforeAll(async () => {
  nats = await NatsCluster.start(1);
  engines = await startSite(nats, 1, 'site-a');
  const engine = engines[0] as SiteEngine;
  task = await settled('camera started', () =>
    engine.call<TaskView>('POST', '/api/task', {
      name: 'gate',
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: VIDEO,
    }),
  );
  // The engine leads placement once it holds the lease and has planned a round with the camera on it.
  await settled('site-a leading with the camera', async () => {
    const site = await siteOf(engine);
    if (site.leader !== 'site-a' || site.placement === null || !site.assignments[task.task_id])
      throw new Error(JSON.stringify(site));
    return site;
  });
  single = await startConsoleEngine('console-site-single');
  browser = single.browser;
}, 180_000);

afterAll(async () => {
  await single?.stop();
  if (engines) await stopSite(engines);
  await nats?.dispose();
});

describe('the site on the System page', () => {
  it('lists the node up, marked as the placement leader and as this node, with the headroom verdict', async () => {
    const page = await open(engines[0] as SiteEngine, '/system');
    const section = page.getByRole('region', { name: 'Site' });
    const row = section.getByRole('table', { name: /The engines of this site/ }).getByRole('row', {
      name: /site-a/,
    });
    await row.waitFor(POLL);
    expect(await row.getByRole('rowheader').textContent()).toBe('site-aPlacement leaderThis node');
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells[0]).toBe('Up');
    expect(cells[1]).toMatch(/^[\d.]+ \/ [\d.]+$/);
    expect(cells[2]).toMatch(/^[\d.]+ [kMG]B of [\d.]+ [kMG]?B$/);
    await expect.poll(async () => (await row.getByRole('cell').nth(3).textContent()) ?? '', POLL).toBe('1');
    expect(cells[4]).toMatch(/^\d+\.\d+\.\d+/);
    expect(await section.textContent()).toContain('This console talks to site-a.');
    // One node: losing it leaves its camera nowhere, and the page says so as a warning.
    const warning = section.getByRole('alert');
    await warning.waitFor(POLL);
    expect(await warning.textContent()).toMatch(
      /^Losing site-a would leave 1 cameras without a place: its 1 cameras need [\d.]+ cores, the other nodes have 0 spare\. Add a node or capacity\.$/,
    );
    await page.close();
  }, 90_000);

  it('labels the camera with its node on the tasks list and on the wall', async () => {
    const page = await open(engines[0] as SiteEngine, '/tasks');
    const row = page.getByRole('row', { name: /gate/ });
    await row.getByText('Node site-a').waitFor(POLL);
    await page.getByRole('navigation').getByRole('link', { name: 'Wall' }).click();
    await page.locator('.wall-tile').getByText('Node site-a').waitFor(POLL);
    await page.close();
  }, 60_000);
});

describe('a single workstation', () => {
  it('shows no Site section, and no node label', async () => {
    await single.api('POST', '/api/task', {
      name: 'alone',
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: VIDEO,
    });
    let answered: Promise<Response> | undefined;
    const page = await open({ url: single.engine.url, token: single.token }, '/system', (created) => {
      answered = created.waitForResponse((response) => response.url().endsWith('/api/cluster'));
    });
    await page.getByRole('region', { name: 'CPU' }).waitFor(POLL);
    expect(await (await answered)?.json()).toEqual({ code: 0, msg: 'success', data: { enabled: false } });
    await page.getByRole('heading', { name: 'Models' }).waitFor(POLL);
    expect(await page.getByRole('region', { name: 'Site' }).count()).toBe(0);
    await page.getByRole('navigation').getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('row', { name: /alone/ }).waitFor(POLL);
    expect(await page.getByText(/^Node /).count()).toBe(0);
    expect(await page.locator('.tasks-table').first().textContent()).not.toContain('Node');
    await page.close();
  }, 60_000);
});
