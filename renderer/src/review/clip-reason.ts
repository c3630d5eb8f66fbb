import type { MessageKey, Translate } from '../i18n';

/** The reasons a clip is "none" that the console says in words; another is shown as the engine says it. */
const REASONS: readonly string[] = [
  'no_buffer',
  'disk_full',
  'quota',
  'cut_failed',
  'engine_restarted',
  'expired',
  'off',
];

/** Why a clip is "none", in the operator's words. */
export function clipReason(t: Translate, reason: string | null): string {
  if (reason === null) return t('clip.reason.unknown');
  return REASONS.includes(reason) ? t(`clip.reason.${reason}` as MessageKey) : reason;
}
