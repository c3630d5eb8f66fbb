import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './helpers/browser';
import { fileCamera, type SiteEngine, siteOf, startSite, stopSite } from './helpers/cluster-engines';
import { settled } from './helpers/eventually';
import { NatsCluster } from './helpers/nats-cluster';

/*
 * The web console over a site of two nodes in Chromium: one real NATS server, two engines started
 * through the CLI with --cluster (each serving the built console of `npm run build`), a camera on
 * each. The tasks page and the Live view name each camera's node; then the node that served the
 * console is killed (SIGKILL) and the page must end up on the other node, the session carried in the
 * address's fragment and never anywhere a server or a log sees it.
 */

/** How long the page may take to show something (a loaded machine is slow, never wrong). */
const POLL = { timeout: 45_000 };

let nats: NatsCluster;
let engines: SiteEngine[];
let browser: Browser;
let a: SiteEngine;
let b: SiteEngine;

/**
 * A page signed in on `engine` alone: the session is put in that origin's sessionStorage before its
 * scripts run, never in another origin's (what the console there gets, it must get by the handoff).
 */
async function openOn(engine: SiteEngine, path: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  const page = await context.newPage();
  await page.addInitScript(
    ({ origin, token }) => {
      if (location.origin !== origin || sessionStorage.getItem('vc.session')) return;
      sessionStorage.setItem(
        'vc.session',
        JSON.stringify({ token, username: 'admin', expiresAt: Date.now() + 3_600_000 }),
      );
      localStorage.setItem('vc.language', 'en');
    },
    { origin: new URL(engine.url).origin, token: engine.token },
  );
  await page.goto(`${engine.url}/#${path}`);
  return page;
}

beforeAll(async () => {
  nats = await NatsCluster.start(1);
  engines = await startSite(nats, 2, 'site-a', 'site-b');
  [a, b] = engines as [SiteEngine, SiteEngine];
  await fileCamera(a, 'cam-a');
  await fileCamera(b, 'cam-b');
  for (const engine of engines)
    await settled(`${engine.name} seeing both nodes and cameras`, async () => {
      const site = await siteOf(engine);
      if (
        site.nodes.filter((node) => node.state === 'up').length < 2 ||
        Object.keys(site.assignments).length < 2
      )
        throw new Error(JSON.stringify(site));
      return site;
    });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (engines) await stopSite(engines);
  await nats?.dispose();
});

describe('the console of a site', () => {
  it("names each camera's node on the tasks page and in the Live view, the other node's too", async () => {
    const page = await openOn(a, '/tasks');
    await page.getByRole('row', { name: /cam-a/ }).getByText('Node site-a').waitFor(POLL);
    await page.getByRole('row', { name: /cam-b/ }).getByText('Node site-b').waitFor(POLL);
    await page.getByRole('navigation').getByRole('link', { name: 'Live' }).click();
    const select = page.getByLabel('Task', { exact: true });
    await expect
      .poll(
        async () =>
          (await select.locator('option').allTextContents()).filter((text) => text.includes('Node')),
        POLL,
      )
      .toEqual([expect.stringMatching(/ · Node site-a$/), expect.stringMatching(/ · Node site-b$/)]);
    const options = await select.locator('option').allTextContents();
    await select.selectOption({ label: options.find((text) => text.endsWith('Node site-b')) as string });
    await expect.poll(() => page.locator('.live-node').textContent(), POLL).toBe('Node site-b');
    await page.close();
  }, 90_000);

  it('follows the operator to the other node when its node dies, the session only in the fragment', async () => {
    // Until tokens are shared by the site, a token of site-a is refused on site-b: then site-b's
    // sign-in page must show, saying why; once they are, its console. Both are checked here.
    const validOnB = (await fetch(`${b.url}/api/tasks`, { headers: { authorization: `Bearer ${a.token}` } }))
      .ok;
    const page = await openOn(a, '/tasks');
    const requests: Request[] = [];
    page.on('request', (request) => requests.push(request));
    await page.getByRole('row', { name: /cam-b/ }).waitFor(POLL);

    await a.kill();
    const notice = page.getByRole('alert').filter({ hasText: 'does not answer' });
    await notice.waitFor(POLL);
    expect(await notice.locator('p').textContent()).toMatch(
      /^Node site-a, which this console talks to, does not answer\. Going on at site-b in \d s\.$/,
    );
    expect(await notice.getByRole('button').allTextContents()).toEqual(['Go on at site-b now']);

    const bOrigin = new URL(b.url).origin;
    await page.waitForURL((url) => url.origin === bOrigin, POLL);
    // The address keeps the route alone: the session left it before the console rendered.
    await expect.poll(() => page.url(), POLL).toBe(`${bOrigin}/#/tasks`);
    if (validOnB) {
      await page.getByRole('heading', { name: 'Analysis tasks' }).waitFor(POLL);
      await page.getByRole('row', { name: /cam-b/ }).getByText('Node site-b').waitFor(POLL);
    } else {
      await page.getByRole('heading', { name: 'Sign in' }).waitFor(POLL);
      expect(await page.getByRole('status').textContent()).toBe(
        'The node this console talked to stopped answering, and the console moved to this node of the site. Your sign-in is not valid here: please sign in again.',
      );
      expect(await page.evaluate(() => sessionStorage.getItem('vc.session'))).toBeNull();
    }
    // The move itself: one navigation to site-b's console, its address and headers without the
    // token or the fragment (a browser never sends a fragment; this proves nothing else went).
    const moves = requests.filter(
      (request) => request.isNavigationRequest() && request.url().startsWith(bOrigin),
    );
    expect(moves.map((request) => request.url())).toEqual([`${bOrigin}/`]);
    expect(JSON.stringify(await moves[0]?.allHeaders())).not.toContain(a.token);
    for (const request of requests) {
      expect(request.url()).not.toContain('vc-follow');
      const headers = Object.entries(await request.allHeaders()).filter(([name]) => name !== 'authorization');
      expect(JSON.stringify(headers)).not.toContain(a.token);
      // Elsewhere only where the console always sends it: the live feed's documented ?token=.
      if (request.url().includes(a.token)) expect(new URL(request.url()).pathname).toBe('/api/events/stream');
    }
    await page.close();
  }, 120_000);
});
