// The OpenAPI description of the product category read: the one operation the interface fixes word for
// word, its 400 included (the validation issues, without the code every other error carries).
import { categoryParamsSchema } from '../categories/category.schema';
import type { DocContext, Operations } from './openapi-context';
import { z } from './openapi-zod';

const temperature = z.number().nullable().openapi({ description: 'null when the category has no limit' });

const productCategory = z
  .strictObject({ id: z.uuid(), name: z.string(), min_temperature: temperature, max_temperature: temperature })
  .openapi({ description: 'A product category: its id, its name and the temperatures it must be kept between' });

const categoryIdError = z
  .strictObject({
    errors: z.record(z.string(), z.array(z.string())).openapi({ description: 'field -> messages' }),
    errors_v2: z.strictObject({
      formatted: z
        .object({ _errors: z.array(z.string()) })
        .catchall(z.unknown())
        .openapi({ description: "zod's formatted error tree" }),
      issues: z.array(
        z.strictObject({
          code: z.string(),
          expected: z.unknown(),
          message: z.string(),
          path: z.array(z.string()),
          received: z.unknown(),
        }),
      ),
    }),
    message: z.string(),
  })
  .openapi({ description: 'The id is not a UUID: the validation issues, without the code every other error carries' });

const categoryPathParams = categoryParamsSchema.extend({ id: categoryParamsSchema.shape.id.meta({ format: 'uuid' }) });

export function categoryOperations(context: DocContext): Operations {
  const { registry, json, errorBody: ErrorBody, requestIdParameter } = context;
  const operations: Operations = {};
  const ProductCategory = registry.register('ProductCategory', productCategory);
  const CategoryResponse = registry.register('ProductCategoryResponse', z.strictObject({ data: ProductCategory }));
  const CategoryIdError = registry.register('ProductCategoryIdError', categoryIdError);

  operations.getProductCategory = {
    summary: 'Detail product category',
    tags: ['Order'],
    request: { params: categoryPathParams, headers: requestIdParameter },
    responses: {
      200: json(CategoryResponse, 'The category'),
      400: json(CategoryIdError, 'The id is not a UUID'),
      401: json(ErrorBody, 'Missing or unknown API key (E-A1/1-01), whatever the id'),
      404: json(ErrorBody, 'No category has this id (E-N1/1-01)'),
      503: json(ErrorBody, 'PostgreSQL unavailable (E-S1/1-03), or the connections the gateway keeps for it all busy (E-S1/1-08)', true),
    },
  };
  return operations;
}
