import { Link, useLocation } from 'wouter';
import { paths } from '../routes';
import { useSession, useT } from '../store';

/**
 * Asks to replace the first start's random password (the engine said so at sign-in) on every screen
 * until it is changed; the change signs the session out, and the next sign-in no longer says so.
 */
export function InitialPasswordNotice() {
  const t = useT();
  const initial = useSession((state) => state.session?.initialPassword === true);
  const [location] = useLocation();
  if (!initial) return null;
  return (
    <div className="notice notice-warn initial-password" role="alert">
      <p>{t('account.initialPassword')}</p>
      {location !== paths.settings && (
        <Link className="button" href={paths.settings}>
          {t('account.choosePassword')}
        </Link>
      )}
    </div>
  );
}
