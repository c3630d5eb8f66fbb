import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useTransport } from '../context';
import { translate } from '../i18n';
import { packagesQuery } from '../queries/packages';
import { useSession } from '../store';
import { type Names, namesOf } from './names';

/** Names for the ids of installed packages, in the console's language (ids until the list is in). */
export function useNames(): Names {
  const language = useSession((state) => state.language);
  const { data: packages } = useQuery(packagesQuery(useTransport()));
  return useMemo(
    () => namesOf(packages ?? [], (key, params) => translate(language, key, params)),
    [packages, language],
  );
}
