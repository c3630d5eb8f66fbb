import { benchApi } from './api';

/** Every benchmark of the project, one table each. */
console.log('== bench:api ==');
console.table(await benchApi());
