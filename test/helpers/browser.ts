import { type Browser, chromium, type Locator, type Page } from 'playwright-core';

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

/** Opens the header's account menu (theme, language, who is signed in, sign out) unless it is open. */
export async function openAccountMenu(page: Page): Promise<void> {
  const menu = page.locator('details.account-menu');
  if (!(await menu.evaluate((details) => (details as HTMLDetailsElement).open))) {
    await menu.locator('summary').click();
  }
}

/**
 * Signs the page's console in with an API token before any of its scripts run (the web console keeps
 * its session in sessionStorage), in the given language and theme.
 */
export async function presetSession(
  page: Page,
  token: string,
  display: { language?: string; theme?: string } = {},
): Promise<void> {
  await page.addInitScript(
    ({ token, language, theme }) => {
      const session = { token, username: 'admin', expiresAt: Date.now() + 3_600_000 };
      sessionStorage.setItem('vc.session', JSON.stringify(session));
      if (language) localStorage.setItem('vc.language', language);
      if (theme) localStorage.setItem('vc.theme', theme);
    },
    { token, language: display.language, theme: display.theme },
  );
}

/**
 * The task wizard from its source step to Start: the package and one of its apps chosen, the areas
 * and delivery steps left as they are.
 */
export async function startFromSource(wizard: Locator, zapkId: string, app: RegExp): Promise<void> {
  await wizard.getByRole('button', { name: 'Next' }).click();
  await wizard.getByRole('combobox', { name: 'Package' }).selectOption(zapkId);
  await wizard.getByRole('checkbox', { name: app }).check();
  await wizard.getByRole('button', { name: 'Next' }).click();
  await wizard.getByRole('button', { name: 'Next' }).click();
  await wizard.getByRole('button', { name: 'Start task' }).click();
}
