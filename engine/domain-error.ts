/**
 * A refusal in the domain's own words. Domain modules throw (or return) these and never HTTP errors;
 * the one table in engine/api/domain-errors.ts maps each kind to an envelope code. Each domain module
 * declares its kinds as a string union and adds them to that table.
 */
export class DomainError<Kind extends string = string> extends Error {
  constructor(
    readonly kind: Kind,
    message: string,
    readonly details: DomainErrorDetails = {},
    /** What went wrong inside, for the engine log only: the answer says `message`. */
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface DomainErrorDetails {
  /** The request field at fault, as a path from the body's root: "app_ids", "app_configs[0].polygon". */
  field?: string;
  /** Seconds after which trying again may succeed. */
  retryAfterS?: number;
  /** A stable word for the kind of refusal where a code has several (envelope extension `reason`). */
  reason?: string;
}
