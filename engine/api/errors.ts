import { ERRORS, type ErrorKind } from '../contract/errors';

/** An envelope error the HTTP layer answers with: one of the contract's ERRORS and its message. */
export class ApiError extends Error {
  readonly code: number;
  readonly status: number;

  constructor(
    kind: ErrorKind,
    message: string,
    readonly headers: Record<string, string> = {},
    /** The request field at fault (envelope extension beside code and msg). */
    readonly field?: string,
    /** The kind of refusal where a code has several, e.g. why a source did not open (extension). */
    readonly reason?: string,
  ) {
    super(message);
    this.code = ERRORS[kind].code;
    this.status = ERRORS[kind].status;
  }
}
