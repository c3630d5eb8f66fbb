/**
 * Every error the API can answer with: part of the contract other programs are written against.
 * code = HTTP status * 100 + a serial (api-decisions.md); docs/errors.md lists the same table and a
 * test keeps the two in step. The engine's ApiError (engine/api/errors.ts) answers with these.
 */
export const ERRORS = {
  INVALID_PARAMETER: {
    code: 40001,
    status: 400,
    meaning: 'A field is missing, has the wrong type or is out of range; msg names the field',
  },
  MALFORMED_JSON: {
    code: 40002,
    status: 400,
    meaning: 'The body is not valid JSON (or is empty where JSON is required)',
  },
  INVALID_PACKAGE: {
    code: 40003,
    status: 400,
    meaning: 'The uploaded .zapk is not a valid package (bad zip, bad manifest, unsafe entry, too large)',
  },
  INVALID_IMAGE: {
    code: 40004,
    status: 400,
    meaning: 'The image cannot be decoded: corrupt, truncated or not a whole image file',
  },
  MALFORMED_REQUEST: {
    code: 40005,
    status: 400,
    meaning: 'The request is not valid HTTP (refused by the HTTP parser); the connection is closed',
  },
  MISSING_TOKEN: {
    code: 40101,
    status: 401,
    meaning: 'No Authorization header, or not of the form "Bearer <token>" (scheme in any case)',
  },
  INVALID_TOKEN: { code: 40102, status: 401, meaning: 'The token is malformed, unknown, revoked or expired' },
  BAD_CREDENTIALS: { code: 40103, status: 401, meaning: 'Wrong username or password' },
  LICENSE_EXPIRED: {
    code: 40301,
    status: 403,
    meaning: 'An application of the request has an expired license',
  },
  HOST_NOT_ALLOWED: {
    code: 40302,
    status: 403,
    meaning:
      'The Host header is not an IP address, localhost or a name listed in allowed_hosts (or is missing)',
  },
  ORIGIN_NOT_ALLOWED: {
    code: 40303,
    status: 403,
    meaning: "The request comes from a web page of another origin than the engine's own or an allowed one",
  },
  TASK_NOT_FOUND: { code: 40401, status: 404, meaning: 'No task with that task_id' },
  PACKAGE_NOT_FOUND: { code: 40402, status: 404, meaning: 'No application package with that zapk_id' },
  APP_NOT_FOUND: { code: 40403, status: 404, meaning: 'The package has no application with that app_id' },
  ROUTE_NOT_FOUND: { code: 40404, status: 404, meaning: 'No such endpoint' },
  STREAM_NOT_FOUND: { code: 40405, status: 404, meaning: 'No video stream with that id' },
  OPTIMIZATION_NOT_FOUND: { code: 40406, status: 404, meaning: 'No optimization with that id' },
  EVENT_NOT_FOUND: { code: 40407, status: 404, meaning: 'No stored event with that event_id' },
  SAMPLE_NOT_FOUND: {
    code: 40408,
    status: 404,
    meaning: 'The optimization has no sample with that sample_id',
  },
  CLIP_NOT_FOUND: { code: 40410, status: 404, meaning: 'No clip with that clip_id' },
  CLIP_NOT_READY: {
    code: 40411,
    status: 404,
    meaning:
      'The clip has no file: still being cut (reason pending) or none (reason says why, e.g. disk_full, quota)',
  },
  REVIEW_ITEM_NOT_FOUND: { code: 40412, status: 404, meaning: 'No review item with that item_id' },
  METHOD_NOT_ALLOWED: {
    code: 40501,
    status: 405,
    meaning: 'The endpoint exists but not with this HTTP method (see the Allow header)',
  },
  REQUEST_TIMEOUT: {
    code: 40801,
    status: 408,
    meaning:
      "The request's headers did not arrive within 10 s, or the whole request within 10 min; the connection is closed",
  },
  PACKAGE_IN_USE: { code: 40901, status: 409, meaning: 'The package is used by a running task' },
  TASK_CLOSED: { code: 40902, status: 409, meaning: 'The task is closed and cannot be changed' },
  WRONG_TASK_MODE: {
    code: 40903,
    status: 409,
    meaning: 'The operation does not fit the task mode (e.g. an image sent to a video task)',
  },
  NO_RECEIVER: {
    code: 40904,
    status: 409,
    meaning: 'The event cannot be redelivered: its task has no report_url',
  },
  OPTIMIZATION_RUNNING: {
    code: 40905,
    status: 409,
    meaning: 'An optimization of that application of the task is already running',
  },
  TASK_NOT_CLOSED: {
    code: 40906,
    status: 409,
    meaning: 'Only a closed task can be purged (DELETE with purge=true); close it first',
  },
  NOT_CLUSTER_NODE: {
    code: 40907,
    status: 409,
    meaning: 'Cluster mode only: this engine is a single workstation, not a node of a site (no --cluster)',
  },
  APP_EDIT_CONFLICT: {
    code: 40908,
    status: 409,
    meaning:
      "Cluster mode: other nodes edited the same application's rule at the same moment, every try of this edit; nothing of it was applied, send it again",
  },
  TAKE_REFUSED: {
    code: 40909,
    status: 409,
    meaning:
      'Cluster mode: a task named in take cannot leave the site with this node (unknown, closed, no room here, or its source not reachable from here; msg says which and why); the leave did not start',
  },
  BODY_TOO_LARGE: {
    code: 41301,
    status: 413,
    meaning:
      'The body is larger than the endpoint accepts (JSON 1 MiB, task start and update 64 KiB, images 20 MiB, packages 1 GiB)',
  },
  IMAGE_TOO_LARGE: {
    code: 41302,
    status: 413,
    meaning: 'The image has more than 100 megapixels (a change-detection pair: both together)',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    code: 41501,
    status: 415,
    meaning: 'The Content-Type is not one the endpoint accepts',
  },
  UNSUPPORTED_IMAGE_TYPE: {
    code: 41502,
    status: 415,
    meaning: 'The image is not a JPEG, PNG, BMP or WebP file (judged by its content)',
  },
  RANGE_NOT_SATISFIABLE: {
    code: 41601,
    status: 416,
    meaning: 'The Range asks for bytes the clip does not have (Content-Range says its size)',
  },
  NOT_CHANGE_DETECTION_APP: {
    code: 42201,
    status: 422,
    meaning: 'A diff task may only run change-detection applications (type 2)',
  },
  TIME_SERIES_NOT_VIDEO: {
    code: 42202,
    status: 422,
    meaning: 'A time-series application (type 3) may only run in a video task',
  },
  CHANGE_DETECTION_NOT_DIFF: {
    code: 42203,
    status: 422,
    meaning: 'A change-detection application (type 2) may only run in a diff task',
  },
  NO_REFERENCE_IMAGE: {
    code: 42205,
    status: 422,
    meaning: 'image_b came without image_a, and the task has no earlier image_b to compare it with',
  },
  MODEL_NOT_SUPPORTED: {
    code: 42206,
    status: 422,
    meaning: "An application's model cannot analyse this kind of upload in this build",
  },
  SOURCE_TOO_LARGE: {
    code: 42207,
    status: 422,
    meaning: "The video source's frames have more pixels than the engine accepts (default 4096x2160)",
  },
  IMAGES_NOT_REGISTERED: {
    code: 42208,
    status: 422,
    meaning:
      'The two images of a change-detection pair cannot be registered: they do not show enough of one scene (too little overlap)',
  },
  IMAGE_TOO_SOON: {
    code: 42901,
    status: 429,
    meaning: "An image came less than 1 s after the task's previous one; it was not queued",
  },
  TOO_MANY_LOGINS: {
    code: 42902,
    status: 429,
    meaning:
      'Too many failed logins from this address or for this user, or too many passwords being checked at once; retry after Retry-After seconds',
  },
  HEADERS_TOO_LARGE: {
    code: 43101,
    status: 431,
    meaning: 'The request headers are larger than 16 KiB; the connection is closed',
  },
  INTERNAL: {
    code: 50001,
    status: 500,
    meaning: 'An unexpected engine error; details are in the engine log',
  },
  STREAM_UNAVAILABLE: {
    code: 50301,
    status: 503,
    meaning: 'The video source could not be opened or gave no frame within 15 s; no task was created',
  },
  IMAGES_BUSY: {
    code: 50302,
    status: 503,
    meaning:
      'Uploaded images already fill the memory for receiving or decoding them and none finished within 10 s; try again',
  },
  MODEL_CHECKS_BUSY: {
    code: 50303,
    status: 503,
    meaning:
      'Too many package installs already wait for their model check; nothing was installed, try again shortly',
  },
  VIDEO_LIMIT: {
    code: 50304,
    status: 503,
    meaning:
      'The engine already runs as many previews, AI-video encoders (of the engine or of the task) or RTMP pushes as it allows; nothing was started, retry after Retry-After seconds',
  },
  CONNECTIONS_BUSY: {
    code: 50305,
    status: 503,
    meaning:
      'Every connection slot open to clients without a token is taken; the last slots are kept for requests with a valid token. Retry after Retry-After seconds',
  },
  FEEDS_BUSY: {
    code: 50306,
    status: 503,
    meaning: 'As many live event feeds as the engine serves (32) are open; retry after Retry-After seconds',
  },
  OWNER_UNREACHABLE: {
    code: 50307,
    status: 503,
    meaning:
      'Cluster mode: the node that runs the task did not answer in time (it may be failing over); retry shortly, or ask the node itself (GET /api/cluster names it)',
  },
  DISK_FULL: {
    code: 50701,
    status: 507,
    meaning:
      'The data disk is full: nothing was changed; reads still work, writes resume once space is freed',
  },
} as const;

export type ErrorKind = keyof typeof ERRORS;
