import { ReplyPartitions, stickyAssignment } from './reply-partitions';

const six = [0, 1, 2, 3, 4, 5];
const asObject = (assignment: Map<string, number[]>) => Object.fromEntries(assignment);

describe('stickyAssignment', () => {
  it('gives a lone member every partition, and splits them evenly between newcomers', () => {
    expect(asObject(stickyAssignment([{ memberId: 'a', owned: [] }], six))).toEqual({ a: six });
    expect(
      asObject(
        stickyAssignment(
          [
            { memberId: 'b', owned: [] },
            { memberId: 'a', owned: [] },
          ],
          six,
        ),
      ),
    ).toEqual({ a: [0, 2, 4], b: [1, 3, 5] });
  });

  it('when a member joins, the others keep what they owned up to their share, and only the surplus moves', () => {
    const assignment = stickyAssignment(
      [
        { memberId: 'a', owned: [0, 2, 4] },
        { memberId: 'b', owned: [1, 3, 5] },
        { memberId: 'c', owned: [] },
      ],
      six,
    );
    expect(asObject(assignment)).toEqual({ a: [0, 2], b: [1, 3], c: [4, 5] });
  });

  it('when a member leaves, the survivors keep theirs and share its partitions', () => {
    const assignment = stickyAssignment(
      [
        { memberId: 'a', owned: [0, 1] },
        { memberId: 'c', owned: [4, 5] },
      ],
      six,
    );
    expect(asObject(assignment)).toEqual({ a: [0, 1, 2], c: [3, 4, 5] });
  });

  it('with more members than partitions, the last members by id get none', () => {
    const members = ['a', 'b', 'c'].map((memberId) => ({ memberId, owned: [] }));
    expect(asObject(stickyAssignment(members, [0, 1]))).toEqual({ a: [0], b: [1], c: [] });
  });

  it('a partition two members claim stays with the first, and a claimed partition that no longer exists is dropped', () => {
    const assignment = stickyAssignment(
      [
        { memberId: 'a', owned: [0, 9] },
        { memberId: 'b', owned: [0, 1] },
      ],
      [0, 1, 2, 3],
    );
    expect(asObject(assignment)).toEqual({ a: [0, 2], b: [1, 3] });
  });
});

describe('ReplyPartitions', () => {
  it('names the lowest partition proven read, and loses those moved away', () => {
    const partitions = new ReplyPartitions();
    expect(partitions.assign([1, 3, 5])).toEqual([]);
    expect(partitions.pick()).toBeUndefined();
    partitions.confirm(3);
    partitions.confirm(5);
    partitions.confirm(4);
    expect(partitions.unconfirmed()).toEqual([1]);
    expect([partitions.pick(), partitions.pick()]).toEqual([3, 3]);
    expect(partitions.assign([1, 5])).toEqual([3]);
    expect(partitions.pick()).toBe(5);
    expect(partitions.hasUsable()).toBe(true);
    expect(partitions.assign([])).toEqual([1, 5]);
    expect(partitions.hasUsable()).toBe(false);
  });

  it('passes over partitions whose leader is failing, and falls back to the lowest when all are', () => {
    const partitions = new ReplyPartitions();
    partitions.assign([0, 1, 2]);
    for (const partition of [0, 1, 2]) partitions.confirm(partition);
    expect(partitions.pick((partition) => partition !== 0)).toBe(1);
    expect(partitions.pick(() => false)).toBe(0);
  });
});

describe('stickyAssignment with a cap per member', () => {
  it('gives a lone member the lowest partitions up to the cap and leaves the rest unassigned', () => {
    expect(asObject(stickyAssignment([{ memberId: 'a', owned: [] }], six, 4))).toEqual({ a: [0, 1, 2, 3] });
  });

  it('keeps what members owned within the cap, and gives a newcomer the free partitions', () => {
    const assignment = stickyAssignment(
      [
        { memberId: 'a', owned: [0, 1, 2, 3] },
        { memberId: 'b', owned: [] },
      ],
      six,
      4,
    );
    expect(asObject(assignment)).toEqual({ a: [0, 1, 2], b: [3, 4, 5] });
  });

  it('gives every member a partition while there are as many partitions as members', () => {
    const members = ['a', 'b', 'c', 'd', 'e', 'f'].map((memberId) => ({ memberId, owned: [] }));
    const assignment = stickyAssignment(members, six, 4);
    expect([...assignment.values()].map((owned) => owned.length)).toEqual([1, 1, 1, 1, 1, 1]);
  });
});
