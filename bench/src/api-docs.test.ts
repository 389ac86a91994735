import { readFileSync } from 'node:fs';
import { sectionOf } from './docs-section';
import { API_DOCS, API_ROUTES, apiTable } from './api-docs';

test("docs/api.md's table of routes is the one the route table and the OpenAPI document give (npm run docs writes it)", () => {
  expect(sectionOf(readFileSync(API_DOCS, 'utf8'), API_ROUTES)).toBe(apiTable());
});

test('the table has a row for every route, with the answers OpenAPI documents', () => {
  const rows = apiTable().split('\n').slice(2);
  expect(rows).toContainEqual(
    expect.stringMatching(
      /^\| `POST \/fleet\/api\/v1\/trip-location` \| `Authorization: Bearer <JWT>`, scope `positions:write` \| .*`application\/json`.* \| 200, 400, /,
    ),
  );
  expect(rows).toContainEqual(
    expect.stringMatching(
      /^\| `GET \/order\/api\/web\/v1\/product-category\/\{id\}` \| `Authorization: <API key>` \| none \| 200, 400, 401, 404/,
    ),
  );
});
