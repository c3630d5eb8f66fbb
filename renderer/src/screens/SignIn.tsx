import { type FormEvent, useId, useState } from 'react';
import { LanguageSwitch } from '../components/LanguageSwitch';
import { useSession, useT } from '../store';
import { ApiError } from '../transport';
import { requestToken } from '../transport/http';

const NOTICES = {
  expired: 'session.expired',
  passwordChanged: 'session.passwordChanged',
  followed: 'session.followed',
} as const;

/** Web mode only: exchanges user name and password for a token (POST /api/auth/token). */
export function SignIn() {
  const t = useT();
  const signIn = useSession((state) => state.signIn);
  const notice = useSession((state) => state.notice);
  const [username, setUsername] = useState('admin');
  const [password, setPassword] = useState('');
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const userId = useId();
  const passwordId = useId();
  const titleId = useId();

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setError(null);
    try {
      const token = await requestToken(username.trim(), password);
      setPassword('');
      signIn(token.access_token, token.expires_in, username.trim(), token.password_change_required === true);
    } catch (caught) {
      setError(
        caught instanceof ApiError ? caught.msg : caught instanceof Error ? caught.message : String(caught),
      );
    } finally {
      setPending(false);
    }
  }

  return (
    <main className="sign-in" id="main">
      <div className="sign-in-header">
        <span className="brand">{t('app.title')}</span>
        <LanguageSwitch />
      </div>
      <form className="card sign-in-form" onSubmit={submit} aria-labelledby={titleId}>
        <h1 id={titleId}>{t('signIn.title')}</h1>
        <p>{t('signIn.intro')}</p>
        {notice !== null && (
          <p className="notice" role="status">
            {t(NOTICES[notice])}
          </p>
        )}
        <label htmlFor={userId}>{t('signIn.username')}</label>
        <input
          id={userId}
          name="username"
          autoComplete="username"
          required
          value={username}
          onChange={(event) => setUsername(event.target.value)}
        />
        <label htmlFor={passwordId}>{t('signIn.password')}</label>
        <input
          id={passwordId}
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
        {error !== null && (
          <p className="notice notice-error" role="alert">
            {t('signIn.failed', { msg: error })}
          </p>
        )}
        <button type="submit" className="primary" disabled={pending}>
          {pending ? t('signIn.submitting') : t('signIn.submit')}
        </button>
      </form>
    </main>
  );
}
