import { DomainError } from '../domain-error';
import type { SettingsRepository } from '../store/settings-repository';
import { CLIP_SETTINGS_DEFAULTS, type ClipSettings, type ClipSettingsBody } from './clip-schema';

export type ClipErrorKind = 'clip.not_found' | 'clip.not_ready' | 'clip.invalid_settings';

const KEY = 'clips';

/** The clip settings as stored, over the defaults (a value stored by an older engine keeps its fields). */
export function loadClipSettings(settings: SettingsRepository): ClipSettings {
  return { ...CLIP_SETTINGS_DEFAULTS, ...settings.get<Partial<ClipSettings>>(KEY) };
}

/**
 * Applies a PUT's fields over the stored settings, checked as a whole (each field's range is the
 * schema's): nothing is stored when the result is refused.
 */
export function saveClipSettings(settings: SettingsRepository, body: ClipSettingsBody): ClipSettings {
  const next = { ...loadClipSettings(settings), ...body };
  if (next.max_post_s < next.post_s)
    throw new DomainError<ClipErrorKind>(
      'clip.invalid_settings',
      `body.max_post_s: must be at least post_s (${next.post_s})`,
      { field: 'max_post_s' },
    );
  settings.set(KEY, next);
  return next;
}
