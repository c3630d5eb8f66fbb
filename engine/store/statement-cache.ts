import type { Db } from './db';

/**
 * Statements prepared once per SQL text. A filtered query has one text per filter shape (SqlWhere
 * binds the values), so the cache stays as small as the number of shapes.
 */
export class StatementCache {
  private readonly statements = new Map<string, ReturnType<Db['prepare']>>();

  constructor(private readonly db: Db) {}

  get(sql: string): ReturnType<Db['prepare']> {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
