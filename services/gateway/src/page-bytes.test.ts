import { cutPage } from './page-bytes';

const rows = (...weights: number[]) => {
  let before = 0;
  return weights.map((weight, index) => {
    const row = { index, page_weight: weight, page_weight_before: before };
    before += weight;
    return row;
  });
};
const indexes = (slice: { items: Array<{ index: number }>; more: boolean }) => ({
  items: slice.items.map((row) => row.index),
  more: slice.more,
});

describe('cutPage', () => {
  test('holds rows up to the limit while they fit the budget, and says whether more follow', () => {
    expect(indexes(cutPage(rows(10, 10, 10), 5, 100))).toEqual({ items: [0, 1, 2], more: false });
    expect(indexes(cutPage(rows(10, 10, 10), 2, 100))).toEqual({ items: [0, 1], more: true });
    expect(indexes(cutPage(rows(40, 40, 40), 5, 100))).toEqual({ items: [0, 1], more: true });
    expect(indexes(cutPage(rows(50, 50), 5, 100))).toEqual({ items: [0, 1], more: false });
  });

  test('always holds the first row, however heavy, so that a page is never empty while rows remain', () => {
    expect(indexes(cutPage(rows(500, 10), 5, 100))).toEqual({ items: [0], more: true });
    expect(indexes(cutPage(rows(500), 5, 100))).toEqual({ items: [0], more: false });
    expect(indexes(cutPage([], 5, 100))).toEqual({ items: [], more: false });
  });
});
