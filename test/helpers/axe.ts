import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** axe-core's browser build, read once: injected into each page checked. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One failing rule on a page: its id, impact, and where (a selector and a few words of the element). */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** The impacts the console must not have on any screen. */
export const BLOCKING_IMPACTS = ['serious', 'critical'];

/**
 * Runs axe-core on the whole page as it is now (WCAG 2.0/2.1 A and AA rules and axe's best
 * practices, plus label-content-name-mismatch, which axe still calls experimental and leaves off:
 * a control whose accessible name does not contain its visible text cannot be spoken to by voice
 * control) and returns its violations.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the debugging protocol: the console's CSP (script-src 'self') refuses inline scripts.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is injected as a global script, untyped here
    const axe = (window as any).axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      rules: { 'label-content-name-mismatch': { enabled: true } },
      resultTypes: ['violations'],
    });
    return result.violations.map(
      (violation: {
        id: string;
        impact: string | null;
        help: string;
        nodes: Array<{ target: unknown[]; html: string }>;
      }) => ({
        id: violation.id,
        impact: violation.impact,
        help: violation.help,
        nodes: violation.nodes.map((node) => `${node.target.join(' ')} ${node.html.slice(0, 120)}`),
      }),
    );
  });
}

/** The violations that fail a screen: serious or critical. */
export async function blockingViolations(page: Page): Promise<AxeViolation[]> {
  return (await axeViolations(page)).filter((violation) => BLOCKING_IMPACTS.includes(violation.impact ?? ''));
}
