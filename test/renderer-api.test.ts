import { describe, expect, it } from 'vitest';
import { appsOf, fileToBase64, isRunning, licenseState, modesOfType } from '../renderer/src/api';
import { appColor, paletteColor } from '../renderer/src/colors';
import { dictionaries, pickLanguage, translate } from '../renderer/src/i18n';

describe('license state', () => {
  const now = Date.UTC(2025, 0, 1);
  const nowSeconds = now / 1000;

  it('perpetual, expires on a date, expired', () => {
    expect(licenseState({ perpetual: true, license_expire: 0 }, now)).toEqual({ kind: 'perpetual' });
    expect(licenseState({ perpetual: false, license_expire: nowSeconds + 86400 }, now)).toEqual({
      kind: 'expires',
      expiresAt: nowSeconds + 86400,
    });
    expect(licenseState({ perpetual: false, license_expire: nowSeconds - 1 }, now)).toEqual({
      kind: 'expired',
    });
    expect(licenseState({ perpetual: false, license_expire: nowSeconds }, now)).toEqual({ kind: 'expired' });
  });
});

describe('package and task helpers', () => {
  it('appsOf reads apps keyed by app_id (and tolerates a list)', () => {
    const app = { app_id: 'a', name: 'A', license_expire: 0, perpetual: true, rule: {} };
    expect(appsOf({ zapk_id: 'p', name: 'P', apps: { a: app } })).toEqual([app]);
    expect(appsOf({ zapk_id: 'p', name: 'P', apps: [app] })).toEqual([app]);
  });

  it('offers each app type only for the modes it runs in', () => {
    expect(modesOfType(1)).toEqual(['video', 'image']);
    expect(modesOfType(2)).toEqual(['diff']);
    expect(modesOfType(3)).toEqual(['video']);
    expect(modesOfType(undefined)).toEqual([]);
  });

  it('encodes uploads as standard base64, also past the chunk size', async () => {
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 7) % 256);
    expect(await fileToBase64(new Blob([bytes]))).toBe(Buffer.from(bytes).toString('base64'));
  });

  it('colours an app by its rule, else the same palette colour every time', () => {
    expect(appColor('crowd', { class_area: { color: '#af52de' }, classes: {} })).toBe('#af52de');
    expect(appColor('person', { classes: { '0': { color: '#ff3b30' } } })).toBe('#ff3b30');
    expect(appColor('x', { classes: { '0': { color: 'red' } } })).toBe(paletteColor('x'));
    expect(paletteColor('vehicle')).toBe(paletteColor('vehicle'));
  });

  it('isRunning is close_code 0', () => {
    expect(isRunning({ close_code: 0 })).toBe(true);
    expect(isRunning({ close_code: 1 })).toBe(false);
  });
});

describe('i18n', () => {
  it('every language has every key, non-empty, with the same placeholders', () => {
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const [language, dictionary] of Object.entries(dictionaries)) {
      for (const [key, text] of Object.entries(dictionaries.en)) {
        const translated = (dictionary as Record<string, string>)[key];
        expect(translated, `${language} ${key}`).toBeTruthy();
        expect(placeholders(translated ?? ''), `${language} ${key}`).toEqual(placeholders(text));
      }
    }
  });

  it('translates with parameters and picks a language from the browser list', () => {
    expect(translate('en', 'license.expires', { date: 'Jan 1, 2026' })).toBe('Expires on Jan 1, 2026');
    expect(translate('zh-CN', 'tasks.closeLabel', { id: 't1' })).toBe('关闭任务 t1');
    expect(pickLanguage(['zh-TW', 'en'])).toBe('zh-CN');
    expect(pickLanguage(['fr-FR', 'en-GB'])).toBe('en');
    expect(pickLanguage([])).toBe('en');
  });
});
