/**
 * Ids as operators read them: an app id as its name, a class id as its label, a rule id (what the
 * engine fires: "person:0", "person:counter", "person:speed:2", "person:removed") as the app's name
 * and what the rule watches, in the rule editor's words. The one place ids become names; an id with
 * no name known (its package gone) stays as it is, so nothing is hidden.
 */
import { appsOf, type ZapkApp, type ZapkPackage } from '../api';
import type { Translate } from '../i18n';

export interface Names {
  app(appId: string): string;
  /** A class id's name; with an app, that app's, else every installed app's (usually one). */
  class(classId: string, appId?: string): string;
  rule(ruleId: string): string;
}

/** The rule's own name for a class (the rule editor's "Name"), else the model's label at its index. */
function classNameIn(app: ZapkApp, classId: string): string | undefined {
  const classes = (app.rule as { classes?: Array<{ class_id?: unknown; name?: unknown }> } | null)?.classes;
  const entry = Array.isArray(classes)
    ? classes.find((candidate) => candidate.class_id === classId)
    : undefined;
  if (typeof entry?.name === 'string' && entry.name.trim()) return entry.name;
  const label = /^\d+$/.test(classId) ? app.labels?.[Number(classId)] : undefined;
  return label?.trim() ? label : undefined;
}

export function namesOf(packages: readonly ZapkPackage[], t: Translate): Names {
  const apps = new Map<string, ZapkApp>();
  for (const pkg of packages)
    for (const app of appsOf(pkg)) if (!apps.has(app.app_id)) apps.set(app.app_id, app);
  // Longest first: an app id may itself hold a colon, and "a:b:0" must find "a:b" before "a".
  const ids = [...apps.keys()].sort((a, b) => b.length - a.length);

  const app = (appId: string) => apps.get(appId)?.name?.trim() || appId;
  const className = (classId: string, appId?: string) => {
    const owners = appId !== undefined ? [apps.get(appId)] : [...apps.values()];
    const found = new Set(owners.flatMap((owner) => (owner ? [classNameIn(owner, classId)] : [])));
    found.delete(undefined);
    return found.size > 0 ? [...found].join(' / ') : classId;
  };
  const rule = (ruleId: string) => {
    const appId = ids.find((id) => ruleId.startsWith(`${id}:`));
    if (appId === undefined) return ruleId;
    const what = ruleId.slice(appId.length + 1);
    const name = app(appId);
    if (what === 'counter') return t('names.ruleCounter', { app: name });
    if (what === 'removed') return t('names.ruleRemoved', { app: name });
    const speed = /^speed:(.+)$/.exec(what);
    if (speed?.[1]) return t('names.ruleSpeed', { app: name, class: className(speed[1], appId) });
    return t('names.ruleClass', { app: name, class: className(what, appId) });
  };
  return { app, class: className, rule };
}
