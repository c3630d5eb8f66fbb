import { benchApi } from './api';
import { benchDelivery } from './delivery';
import { benchImage } from './image';
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
