/**
 * A WHERE clause built from the repository's own fixed fragments, every value bound as a named
 * parameter: what a caller's filter holds never becomes SQL text.
 */
export class SqlWhere {
  readonly params: Record<string, unknown> = {};
  private readonly clauses: string[];

  constructor(...fixed: string[]) {
    this.clauses = [...fixed];
  }

  /** `clause` with `@name` bound to `value`; nothing when the value is undefined (a filter left out). */
  add(clause: string, name: string, value: unknown): this {
    if (value === undefined) return this;
    this.clauses.push(clause);
    this.params[name] = value;
    return this;
  }

  /** `column IS NULL` or `IS NOT NULL`, by `present`; nothing when it is undefined. */
  isNull(column: string, present: boolean | undefined): this {
    if (present !== undefined) this.clauses.push(`${column} IS ${present ? 'NOT ' : ''}NULL`);
    return this;
  }

  /** The fragments joined, '1' when there are none (so it always follows WHERE). */
  get sql(): string {
    return this.clauses.length > 0 ? this.clauses.join(' AND ') : '1';
  }
}
