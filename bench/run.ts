import { benchApi } from './api';
import { benchDelivery } from './delivery';
import { benchImage } from './image';
import { benchLive } from './live';
import { benchVideo } from './video';

/** Every benchmark of the project, one table each. */
console.log('== bench:api ==');
console.table(await benchApi());
console.log('== bench:delivery ==');
console.table(await benchDelivery());
console.log('== bench:image ==');
console.table(await benchImage());
const video = await benchVideo();
console.log('== bench:video: raw onnxruntime ceiling ==');
console.table(video.ceiling);
console.log('== bench:video: engine pipeline ==');
console.table(video.pipeline);
const live = await benchLive();
console.log('== bench:live: CPU per annotated 720p video ==');
console.table(live.cpu);
console.log('== bench:live: HLS latency (camera clock burnt into the frames) ==');
console.table(live.latency);
console.log('== bench:live: compositor hot path per 720p frame ==');
console.table(live.hotPath);
