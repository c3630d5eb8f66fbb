import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { HOSTILE_ZAPKS, MODEL_MISMATCH_ZAPKS } from './helpers/zip-fixtures';

/** Hostile packages uploaded through the real API: each refused with 40003, nothing installed or left on disk. */
const work = mkdtempSync(join(tmpdir(), 'vc-hostile-'));
let t: TestEngine;

beforeAll(async () => {
  t = await startTestEngine();
});
afterAll(async () => t?.stop());

describe('POST /api/zapk with hostile packages', () => {
  it.each([...HOSTILE_ZAPKS, ...MODEL_MISMATCH_ZAPKS].map((hostile) => [hostile.name, hostile] as const))(
    'refuses %s',
    async (_name, hostile) => {
      const file = join(work, `${readdirSync(work).length}.zapk`);
      hostile.write(file);
      const before = await t.call('GET', '/api/zapk');
      const form = new FormData();
      form.append('file', new Blob([readFileSync(file)]), 'hostile.zapk');
      const answer = await t.call('POST', '/api/zapk', { raw: { type: '', body: form } });
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 40003 });
      expect(answer.body.msg).toMatch(/^invalid \.zapk: /);
      expect(answer.body.msg).toMatch(hostile.reason);
      expect((await t.call('GET', '/api/zapk')).body).toEqual(before.body);
      // Nothing unpacked, nothing left of the upload.
      expect(readdirSync(join(t.dataDir, 'packages'))).toEqual([]);
      expect(readdirSync(join(t.dataDir, 'tmp'))).toEqual([]);
    },
  );
});
