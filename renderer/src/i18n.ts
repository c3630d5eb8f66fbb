import { featureMessages } from './messages';

/**
 * Every text of the console comes from each feature's table in messages/. `en` defines the keys; other
 * dictionaries must provide all of them (checked by the type). Placeholders are written {name}.
 */
const en = featureMessages.en;

export type MessageKey = keyof typeof en;
export type Dictionary = Record<MessageKey, string>;

const zhCN: Dictionary = featureMessages.zhCN;

export const dictionaries = { en, 'zh-CN': zhCN } as const satisfies Record<string, Dictionary>;

export type Language = keyof typeof dictionaries;

export const LANGUAGES: ReadonlyArray<{ id: Language; label: string }> = [
  { id: 'en', label: 'English' },
  { id: 'zh-CN', label: '简体中文' },
];

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && Object.hasOwn(dictionaries, value);
}

/** The best supported language for a BCP 47 tag list such as navigator.languages. */
export function pickLanguage(preferred: readonly string[]): Language {
  for (const tag of preferred) {
    const lower = tag.toLowerCase();
    if (lower.startsWith('zh')) return 'zh-CN';
    if (lower.startsWith('en')) return 'en';
  }
  return 'en';
}

export type Params = Record<string, string | number>;

export function translate(language: Language, key: MessageKey, params?: Params): string {
  // Falls back to English, then to the key itself (an unexpected value from the engine must not crash).
  const template: string = dictionaries[language][key] ?? en[key] ?? key;
  if (!params) return template;
  return template
    .replace(/\{(\w+)\|([^|}]*)\|([^}]*)\}/g, (whole, name: string, one: string, other: string) =>
      Object.hasOwn(params, name)
        ? plurals(language).select(Number(params[name])) === 'one'
          ? one
          : other
        : whole,
    )
    .replace(/\{(\w+)\}/g, (whole, name: string) =>
      Object.hasOwn(params, name) ? String(params[name]) : whole,
    );
}

/** `{count|event|events}` in a template: the word for the number's plural category in the language. */
const plurals = (language: Language) => new Intl.PluralRules(language);

export type Translate = (key: MessageKey, params?: Params) => string;

/** A time of day in the user's language (ms since the epoch), e.g. "14:02:07". */
export function formatTime(language: Language, ms: number): string {
  return new Intl.DateTimeFormat(language, { timeStyle: 'medium' }).format(new Date(ms));
}

/** Dates in the user's language, e.g. the license expiry (Unix seconds). */
export function formatDate(language: Language, epochSeconds: number): string {
  return new Intl.DateTimeFormat(language, { dateStyle: 'medium' }).format(new Date(epochSeconds * 1000));
}

const BYTE_UNITS = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte'] as const;

/** A byte count in the user's language with a decimal unit: "1.5 GB", "1.5 吉字节". */
export function formatBytes(language: Language, bytes: number): string {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1000 && unit < BYTE_UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return new Intl.NumberFormat(language, {
    style: 'unit',
    unit: BYTE_UNITS[unit],
    unitDisplay: 'short',
    maximumFractionDigits: value < 10 && unit > 0 ? 1 : 0,
  }).format(value);
}

/** A number in the user's language with at most `digits` decimals. */
export function formatNumber(language: Language, value: number, digits = 1): string {
  return new Intl.NumberFormat(language, { maximumFractionDigits: digits }).format(value);
}

/** A duration in its two largest units: "42 s", "3 min 5 s", "2 h 10 min", "4 d 3 h". */
export function formatDuration(t: Translate, seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return t('duration.seconds', { n: s });
  if (s < 3600) return t('duration.minutes', { m: Math.floor(s / 60), s: s % 60 });
  if (s < 86_400) return t('duration.hours', { h: Math.floor(s / 3600), m: Math.floor((s % 3600) / 60) });
  return t('duration.days', { d: Math.floor(s / 86_400), h: Math.floor((s % 86_400) / 3600) });
}
