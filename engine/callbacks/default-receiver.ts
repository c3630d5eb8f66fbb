import { type Static, Type } from '@sinclair/typebox';
import type { SettingsRepository } from '../store/settings-repository';

const KEY = 'callbacks';

/** PUT /api/settings/callbacks. */
export const CallbackSettings = Type.Object(
  {
    default_report_url: Type.String({
      maxLength: 2048,
      description:
        'Where the callbacks of a task without a report_url of its own go: an absolute http:// or https:// URL, or "" for none',
    }),
  },
  { additionalProperties: false },
);
export type CallbackSettings = Static<typeof CallbackSettings>;

/**
 * The site-wide callback URL (an extension): a task started without a report_url delivers there; a
 * task's own report_url wins. Read on every stored event, so a change applies to the next one; kept in
 * memory because events are stored at the analysis' pace.
 */
export class DefaultReceiver {
  private current: CallbackSettings;

  constructor(private readonly settings: SettingsRepository) {
    this.current = { default_report_url: '', ...settings.get<Partial<CallbackSettings>>(KEY) };
  }

  get url(): string {
    return this.current.default_report_url;
  }

  view(): CallbackSettings {
    return { ...this.current };
  }

  /** Stores settings the caller checked (the URL as a task's report_url is checked). */
  save(next: CallbackSettings): CallbackSettings {
    this.settings.set(KEY, next);
    this.current = { ...next };
    return this.view();
  }
}
