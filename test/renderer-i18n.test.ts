import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dictionaries } from '../renderer/src/i18n';

/** The console's texts: each feature's table in renderer/src/messages/, merged into one dictionary per language. */

const MESSAGES = resolve(import.meta.dirname, '../renderer/src/messages');
const placeholders = (text: string) =>
  [...new Set([...text.matchAll(/\{(\w+)[}|]/g)].map((m) => m[1]))].sort();

describe('the console’s dictionaries', () => {
  it('give every language every English key, each text filled in, with the same placeholders', () => {
    const english = dictionaries.en as Record<string, string>;
    for (const [language, dictionary] of Object.entries(dictionaries)) {
      const texts = dictionary as Record<string, string>;
      expect([language, Object.keys(texts).sort()]).toEqual([language, Object.keys(english).sort()]);
      const empty = Object.keys(texts).filter((key) => (texts[key] ?? '').trim() === '');
      const unlike = Object.keys(english).filter(
        (key) => placeholders(texts[key] ?? '').join() !== placeholders(english[key] ?? '').join(),
      );
      expect([language, empty, unlike]).toEqual([language, [], []]);
    }
  });

  it('take each key from one feature table only, in both of its languages', async () => {
    const owner = new Map<string, string>();
    const twice: string[] = [];
    const files = readdirSync(MESSAGES).filter((name) => name.endsWith('.ts') && name !== 'index.ts');
    for (const file of files) {
      const table = (await import(join(MESSAGES, file))) as {
        en: Record<string, string>;
        zhCN: Record<string, string>;
      };
      expect([file, Object.keys(table.zhCN).sort()]).toEqual([file, Object.keys(table.en).sort()]);
      for (const key of Object.keys(table.en)) {
        if (owner.has(key)) twice.push(`${key} (${owner.get(key)}, ${file})`);
        owner.set(key, file);
      }
    }
    expect(twice).toEqual([]);
    // Every text of the console lives in a feature table.
    expect([...owner.keys()].sort()).toEqual(Object.keys(dictionaries.en).sort());
  });
});
