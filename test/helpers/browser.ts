import { type Browser, chromium } from 'playwright-core';

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
