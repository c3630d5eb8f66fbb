import { useEffect, useRef } from 'react';
import { useSession, useT } from '../store';
import { LanguageSwitch } from './LanguageSwitch';
import { ThemeSwitch } from './ThemeSwitch';

/**
 * The header's one menu for the person at the console: display choices (theme, language) and, in
 * the web console, who is signed in and signing out. Folded away so that the screens' links keep
 * one row at 1024 px in either language.
 */
export function AccountMenu({ onSignOut }: { onSignOut: () => void }) {
  const t = useT();
  const mode = useSession((state) => state.mode);
  const session = useSession((state) => state.session);
  const ref = useRef<HTMLDetailsElement>(null);

  useEffect(() => {
    // A menu closes when the operator clicks elsewhere or presses Escape, as menus do.
    const close = (event: Event) => {
      const menu = ref.current;
      if (!menu?.open) return;
      if (event instanceof KeyboardEvent ? event.key === 'Escape' : !menu.contains(event.target as Node)) {
        menu.open = false;
        if (event instanceof KeyboardEvent) menu.querySelector('summary')?.focus();
      }
    };
    document.addEventListener('pointerdown', close);
    document.addEventListener('keydown', close);
    return () => {
      document.removeEventListener('pointerdown', close);
      document.removeEventListener('keydown', close);
    };
  }, []);

  const signedIn = mode === 'http' && session !== null;
  return (
    <details className="account-menu" ref={ref}>
      {/* Named by its visible text first (who is signed in), then what it holds: a name that contains
          the visible text is one a voice-control user can say. */}
      <summary>
        {signedIn ? session.username : t('account.display')}
        <span className="visually-hidden"> · {t('account.menu')}</span>
      </summary>
      <div className="account-panel">
        {signedIn && <p className="meta">{t('session.signedInAs', { user: session.username })}</p>}
        <ThemeSwitch />
        <LanguageSwitch />
        {signedIn && (
          <button type="button" onClick={onSignOut}>
            {t('session.signOut')}
          </button>
        )}
      </div>
    </details>
  );
}
