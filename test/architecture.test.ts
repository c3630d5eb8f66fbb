import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Seams of the engine that a type check cannot see, checked over the source tree. Each rule names the
 * files it exempts, and each exemption says why; an exemption that no longer applies fails too.
 */
const ROOT = resolve(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.tsx?$/.test(name))
    .map((name) =>
      relative(ROOT, join(ROOT, dir, name))
        .split('\\')
        .join('/'),
    );
}

const ENGINE = sources('engine');
const EVERYTHING = [...ENGINE, ...sources('main'), ...sources('renderer')];

describe('rule "domain errors": only engine/api/ speaks HTTP', () => {
  /** Files outside engine/api/ still importing ApiError, each with the reason it may. */
  const EXEMPT: Record<string, string> = {};
  // The error table itself (codes, no HTTP behaviour) is part of engine/contract; ApiError is not.
  const IMPORTS_API_ERRORS = /import\s*(type\s*)?\{[^}]*\bApiError\b[^}]*\}\s*from\s+'[^']*\/api\/errors'/;

  it('no module outside engine/api/ imports engine/api/errors (ApiError)', () => {
    const offenders = EVERYTHING.filter(
      (file) =>
        !file.startsWith('engine/api/') && IMPORTS_API_ERRORS.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(offenders.sort()).toEqual(Object.keys(EXEMPT).sort());
  });
});

describe('rule "route plugins": each route file is a plugin given only what it uses', () => {
  const ROUTES = ENGINE.filter((file) => file.startsWith('engine/api/routes/'));

  it('no route file imports app.ts or takes the whole ApiContext', () => {
    const offenders = ROUTES.filter((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      return /from\s+'\.\.\/app'/.test(text) || /\bctx\s*:\s*ApiContext\b/.test(text);
    });
    expect(ROUTES.length).toBeGreaterThan(10);
    expect(offenders).toEqual([]);
  });

  it('each route file exports its routes as a RoutePlugin', () => {
    const plain = ROUTES.filter(
      (file) => !/export const \w+Routes: RoutePlugin</.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(plain).toEqual([]);
  });
});

describe('rule "sql in repositories": SQL lives only in *-repository.ts modules and engine/store/', () => {
  /** Files outside repositories that still prepare or run SQL, each with the reason it may. */
  const EXEMPT: Record<string, string> = {};

  /** Calls of .prepare( and of .exec( on anything but a regular expression (a literal or a CONSTANT). */
  function runsSql(text: string): boolean {
    if (/\.prepare\s*(<[^>]*>)?\s*\(/.test(text)) return true;
    for (const match of text.matchAll(/\.exec\(/g)) {
      const before = text.slice(0, match.index).trimEnd();
      if (!/(\/[dgimsuy]*|\b[A-Z][A-Z0-9_]*|\))$/.test(before)) return true;
    }
    return false;
  }

  it('no other module calls .prepare( or .exec( on a database', () => {
    const offenders = ENGINE.filter(
      (file) =>
        !file.startsWith('engine/store/') &&
        !file.endsWith('-repository.ts') &&
        runsSql(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(offenders.sort()).toEqual(Object.keys(EXEMPT).sort());
  });
});

describe('rule "one point type": no `as unknown as` between geometry types', () => {
  /** Files still casting through unknown to a geometry type, each with the reason it may. */
  const EXEMPT: Record<string, string> = {};
  /** The vision stages' types (engine/vision/types.ts), read from it so that a new one is guarded too. */
  const VISION_TYPES = [
    ...readFileSync(join(ROOT, 'engine/vision/types.ts'), 'utf8').matchAll(
      /export (?:type|interface) (\w+)/g,
    ),
  ].map((match) => match[1] as string);
  /** The wire's polygon and the old point alias besides them; `number` only as a tuple or an array. */
  const NAMES = [...VISION_TYPES, 'Polygon', 'Pt'].join('|');
  const GEOMETRY_CAST = new RegExp(
    `\\bas\\s+unknown\\s+as\\s+(?:readonly\\s+)?\\(?\\s*(?:(?:${NAMES})\\b|\\[\\s*(?:${NAMES}|number)\\b|number\\s*\\[\\s*\\])`,
  );

  it('guards the vision types', () => {
    expect(VISION_TYPES).toEqual(
      expect.arrayContaining([
        'Point',
        'PointList',
        'FrameSize',
        'Frame',
        'Box',
        'Detection',
        'TrackedObject',
      ]),
    );
  });

  it('no module casts through unknown to a point, polygon, box, detection, frame or number tuple', () => {
    const offenders = EVERYTHING.filter((file) => GEOMETRY_CAST.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(offenders.sort()).toEqual(Object.keys(EXEMPT).sort());
  });
});

describe('rule "rule kinds": each rule kind is its own module behind RuleKind; the orchestrator has none', () => {
  const KINDS = sources('engine/rules/kinds');
  const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

  it('each module of engine/rules/kinds/ implements RuleKind once, and no other engine module does', () => {
    const implementing = ENGINE.flatMap((file) => {
      const count = read(file).match(/\bimplements\s+RuleKind\b/g)?.length ?? 0;
      return count > 0 ? [[file, count]] : [];
    });
    expect(KINDS.length).toBeGreaterThanOrEqual(6);
    expect(implementing.sort()).toEqual(KINDS.map((file) => [file, 1]).sort());
  });

  it('engine/rules/evaluate.ts reads no rule kind’s fields and dispatches on no app type', () => {
    const kindLogic = /\brule\.(counter|left_object|removed_object|speed|stationary)\b|\bAPP_TYPE\b/g;
    expect(read('engine/rules/evaluate.ts').match(kindLogic) ?? []).toEqual([]);
  });
});
