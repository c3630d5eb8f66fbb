import type { ZapkApp } from '../api';
import { appColor } from '../colors';
import type { StageApp } from '../components/PolygonStage';
import { lengthReferenceOf } from '../geometry/areas';

/** A task's apps as the drawing surface shows them: named, typed and coloured from the package's listing. */
export function stageAppsOf(appIds: readonly string[], listed: readonly ZapkApp[]): StageApp[] {
  return appIds.map((appId) => {
    const app = listed.find((candidate) => candidate.app_id === appId);
    return {
      app_id: appId,
      name: app?.name ?? appId,
      type: app?.type ?? 1,
      color: appColor(appId, app?.rule),
      lengthReference: lengthReferenceOf(app?.rule),
    };
  });
}
