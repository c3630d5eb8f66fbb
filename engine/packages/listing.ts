import { type Static, Type } from '@sinclair/typebox';
import { AppType, ListedRule } from '../rules/schema';

/** A package as the listing of 4.2 shows it (2.2, 2.3): apps keyed by app_id (api-decisions.md). */
export const ListedApp = Type.Object({
  app_id: Type.String(),
  name: Type.String(),
  license_expire: Type.Integer({ description: 'License expiry, Unix seconds (0 for perpetual licenses)' }),
  perpetual: Type.Boolean(),
  type: AppType,
  rule: ListedRule,
  labels: Type.Optional(
    Type.Array(Type.String(), {
      description: "Extension: the labels of the app's model; a class_id is a label's index, as a string",
    }),
  ),
});

export type ListedApp = Static<typeof ListedApp>;

export const ListedPackage = Type.Object({
  zapk_id: Type.String(),
  name: Type.String(),
  version: Type.String(),
  builtin: Type.Boolean(),
  apps: Type.Record(Type.String(), ListedApp),
});
export type ListedPackage = Static<typeof ListedPackage>;
