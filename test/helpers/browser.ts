import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium, driven headless by playwright-core (no downloaded browser). */
export const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Muted autoplay needs no gesture anyway; this keeps a blocked play() from hiding a real failure.
  '--autoplay-policy=no-user-gesture-required',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/**
 * A console page in a fresh context; page errors and console errors (a refused CSP, a failed script,
 * an uncaught React error) are collected into `errors`.
 */
export async function openConsolePage(browser: Browser, errors: string[]): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, locale: 'en-US' });
  const page = await context.newPage();
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) {
      errors.push(message.text());
    }
  });
  return page;
}
