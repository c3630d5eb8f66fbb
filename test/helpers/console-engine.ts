import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { buildZapk } from '../../engine/packages/zapk';
import { launchChromium, presetSession } from './browser';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './engine-process';
import { EXAMPLE_MANIFEST } from './example-package';

/**
 * What a console test in Chromium stands on: an engine in its own process (serving the built
 * console of `npm run build`) in a fresh data dir, signed in, and a browser.
 */
export interface ConsoleEngine {
  engine: EngineProcess;
  token: string;
  /** The admin's password, for tests that sign in through the form. */
  password: string;
  browser: Browser;
  dataDir: string;
  /** An API call with the session's token; the envelope's data, or a thrown error. */
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** A page of the console at `path` (a hash route), signed in, in the given size and language. */
  open(
    path: string,
    options?: { width?: number; height?: number; language?: string; theme?: string },
  ): Promise<Page>;
  /** Builds and installs the example package (the fixture COCO model); throws when refused. */
  installExample(): Promise<void>;
  stop(): Promise<void>;
}

export async function startConsoleEngine(
  name: string,
  options: { engineArgs?: string[]; prepare?: (dataDir: string) => Promise<void> | void } = {},
): Promise<ConsoleEngine> {
  const dataDir = mkdtempSync(join(tmpdir(), `vc-${name}-`));
  await options.prepare?.(join(dataDir, 'data'));
  const password = `${name}-password`;
  const engine = await spawnEngine(join(dataDir, 'data'), password, options.engineArgs ?? []);
  const token = await signIn(engine.url, password);
  const browser = await launchChromium();
  return {
    engine,
    token,
    password,
    browser,
    dataDir,
    api: (method, path, body) => callApi(engine.url, token, method, path, body),
    async open(path, { width = 1280, height = 720, language = 'en', theme } = {}) {
      const page = await browser.newPage({ viewport: { width, height } });
      await presetSession(page, token, { language, theme });
      await page.goto(`${engine.url}/#${path}`);
      return page;
    },
    async installExample() {
      const zapk = join(dataDir, 'example.zapk');
      await buildZapk(EXAMPLE_MANIFEST, zapk);
      const form = new FormData();
      form.append('file', new Blob([readFileSync(zapk)]), 'example.zapk');
      const answer = await fetch(`${engine.url}/api/zapk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: form,
      });
      const { code, msg } = (await answer.json()) as { code: number; msg: string };
      if (code !== 0) throw new Error(`the example package was refused: ${code} ${msg}`);
    },
    async stop() {
      await browser.close();
      await stopEngine(engine);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
