import { useT } from '../store';
import { ApiError } from '../transport';

/** A failed request, announced to assistive technology. */
export function ErrorNotice({ error }: { error: unknown }) {
  const t = useT();
  let text: string;
  if (error instanceof ApiError) {
    text =
      error.status === 0
        ? t('common.unreachable', { msg: error.msg })
        : t('common.error', { code: error.code, msg: error.msg });
  } else {
    text = t('common.error', { code: '?', msg: error instanceof Error ? error.message : String(error) });
  }
  return (
    <p className="notice notice-error" role="alert">
      {text}
    </p>
  );
}
