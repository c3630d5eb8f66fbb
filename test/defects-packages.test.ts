import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeOf } from '../engine/packages/registry';
import { startTestEngine, type TestEngine } from './helpers/engine';

/*
 * Defect 6 of issue 16, engine side: the built-in package can be installed again after an uninstall
 * (POST /api/zapk/builtin/restore), and an install says what it did: installed, upgraded,
 * reinstalled (same version) or downgraded.
 */

let t: TestEngine;
beforeAll(async () => {
  t = await startTestEngine();
});
afterAll(async () => {
  await t?.stop();
});

describe('restoring the built-in package', () => {
  it('installs it again after an uninstall, and says reinstalled for the same version', async () => {
    expect((await t.call('DELETE', '/api/zapk/builtin')).status).toBe(200);
    expect(
      ((await t.call('GET', '/api/zapk')).body.data as { zapk_id: string }[]).map((p) => p.zapk_id),
    ).toEqual([]);

    const restored = await t.call('POST', '/api/zapk/builtin/restore');
    expect([restored.status, restored.body]).toEqual([
      200,
      {
        code: 0,
        msg: 'success',
        data: { zapk_id: 'builtin', version: '1.0.0', upgraded: false, change: 'installed' },
      },
    ]);
    const listed = (await t.call('GET', '/api/zapk')).body.data as { zapk_id: string; builtin: boolean }[];
    expect(listed.map((p) => [p.zapk_id, p.builtin])).toEqual([['builtin', true]]);

    const again = await t.call('POST', '/api/zapk/builtin/restore');
    expect(again.body.data).toEqual({
      zapk_id: 'builtin',
      version: '1.0.0',
      upgraded: true,
      change: 'reinstalled',
    });
  });

  it('needs a token', async () => {
    const answer = await t.call('POST', '/api/zapk/builtin/restore', { token: null });
    expect([answer.status, answer.body.code]).toEqual([401, 40101]);
  });
});

describe("an app's labels in the listing (extension, for the rule editor's class picker)", () => {
  it("lists each app's model labels", async () => {
    const listed = (await t.call('GET', '/api/zapk')).body.data as Array<{
      apps: Record<string, { labels?: string[] }>;
    }>;
    const builtin = listed[0]?.apps ?? {};
    expect(Object.fromEntries(Object.entries(builtin).map(([id, app]) => [id, app.labels]))).toEqual({
      motion: ['motion'],
      intrusion: ['motion'],
      change: ['change'],
    });
  });
});

describe('what an install did', () => {
  it('compares versions part by part, numerically', () => {
    expect(changeOf('1.9.2', '1.10.0')).toBe('upgraded');
    expect(changeOf('1.0.0', '1.0.0')).toBe('reinstalled');
    expect(changeOf('2.0.0', '1.10.0')).toBe('downgraded');
  });
});
