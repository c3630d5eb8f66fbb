import type { UseQueryResult } from '@tanstack/react-query';
import { useId } from 'react';
import { licenseState, modesOfType, type ZapkApp, type ZapkPackage } from '../api';
import { AppCheckbox } from '../components/AppCheckbox';
import { ErrorNotice } from '../components/ErrorNotice';
import { errorProps, FieldError } from '../components/FieldError';
import { useT } from '../store';
import type { StepProps } from './state';

interface AppsStepProps extends StepProps {
  packages: UseQueryResult<ZapkPackage[]>;
  /** The chosen package's apps. */
  candidates: readonly ZapkApp[];
}

/** The second step: a package, then those of its apps that fit the mode and are licensed. */
export function AppsStep({ state, dispatch, visible, packages, candidates }: AppsStepProps) {
  const t = useT();
  const pkgId = useId();
  const { mode, zapkId, appIds } = state;
  const chosen = packages.data?.some((candidate) => candidate.zapk_id === zapkId);
  const now = Date.now();
  return (
    <fieldset>
      <legend>{t('wizard.apps')}</legend>
      <div className="field">
        <label htmlFor={pkgId}>{t('wizard.package')}</label>
        <select
          id={pkgId}
          value={zapkId}
          onChange={(event) => dispatch({ type: 'package', zapkId: event.target.value })}
          {...errorProps(`${pkgId}-error`, visible('zapk_id'))}
        >
          <option value="">{t('wizard.choosePackage')}</option>
          {packages.data?.map((candidate) => (
            <option key={candidate.zapk_id} value={candidate.zapk_id}>
              {candidate.name} ({candidate.zapk_id})
            </option>
          ))}
        </select>
        <FieldError id={`${pkgId}-error`} message={visible('zapk_id')} />
      </div>
      {packages.isError && <ErrorNotice error={packages.error} />}
      {chosen && (
        <ul className="checklist" aria-describedby={`${pkgId}-apps-error`}>
          {candidates.map((app) => {
            const fits = modesOfType(app.type).includes(mode);
            const expired = licenseState(app, now).kind === 'expired';
            return (
              <li key={app.app_id}>
                <AppCheckbox
                  app={app}
                  selected={appIds}
                  onChange={(next) => dispatch({ type: 'apps', appIds: next })}
                  disabled={!fits || expired}
                >
                  {!fits && (
                    <span className="hint"> — {t('wizard.appWrongMode', { mode: t(`mode.${mode}`) })}</span>
                  )}
                  {expired && <span className="hint"> — {t('license.expired')}</span>}
                </AppCheckbox>
              </li>
            );
          })}
        </ul>
      )}
      <FieldError id={`${pkgId}-apps-error`} message={visible('app_ids')} />
    </fieldset>
  );
}
