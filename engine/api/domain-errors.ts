import { DomainError } from '../domain-error';
import { ApiError, type ErrorKind } from './errors';

/**
 * Every domain error kind and the envelope error it answers with: the one place where the domain's
 * words become HTTP. DomainErrorKind is the union of every module's kinds, so a kind left out fails the type check.
 */
type DomainErrorKind = never;
const DOMAIN_ERRORS: Record<DomainErrorKind, ErrorKind> = {};

/** The envelope error for a domain error; undefined for anything else. */
export function toApiError(error: unknown): ApiError | undefined {
  if (!(error instanceof DomainError)) return undefined;
  const kind = (DOMAIN_ERRORS as Record<string, ErrorKind | undefined>)[error.kind];
  if (!kind) return undefined;
  const { field, retryAfterS } = error.details;
  const headers: Record<string, string> =
    retryAfterS === undefined ? {} : { 'retry-after': String(retryAfterS) };
  return new ApiError(kind, error.message, headers, field);
}
