// zod with .openapi(): zod gives a schema its methods when the schema is made, so every module that
// describes the API takes z from here, which extends it before any of them makes one. The shared wire
// schemas, made before, carry their descriptions with zod's own .meta().
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export { z };
