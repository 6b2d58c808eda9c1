import { toConnection } from '../pagination';

const cursorOf = (row: string) => `c-${row}`;

describe('toConnection', () => {
  it('counts a first page that holds the whole list by its rows, whatever the count read beside it saw', () => {
    // The count ran while a third row was being written; the rows' read did not see it yet.
    const page = toConnection(['a', 'b'], 20, 3, cursorOf, true);
    expect(page.totalCount).toBe(2);
    expect(page.edges.map((e) => e.node)).toEqual(['a', 'b']);
    expect(page.pageInfo).toEqual({ hasNextPage: false, endCursor: 'c-b' });
  });

  it('keeps the counted total when the list goes on past the page or the page is not the first', () => {
    // size + 1 rows read: there is a next page, so only the count knows the total.
    const first = toConnection(['a', 'b', 'c'], 2, 7, cursorOf, true);
    expect(first.totalCount).toBe(7);
    expect(first.edges).toHaveLength(2);
    expect(first.pageInfo).toEqual({ hasNextPage: true, endCursor: 'c-b' });
    // A later page's rows are only the tail of the list.
    expect(toConnection(['f', 'g'], 5, 7, cursorOf, false).totalCount).toBe(7);
    expect(toConnection(['f', 'g'], 5, 7, cursorOf).totalCount).toBe(7);
  });
});
