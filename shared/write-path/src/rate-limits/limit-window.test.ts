import { limitWindow } from './write-limits';

describe('limitWindow', () => {
  test.each([
    // rate per unit, unit (s), burst -> points at once, window (s)
    [1200, 60, 5000, { points: 5000, seconds: 250 }],
    [1000, 1, 2000, { points: 2000, seconds: 2 }],
    [3, 60, 5, { points: 5, seconds: 100 }],
    [10, 60, 10, { points: 10, seconds: 60 }],
  ])(
    '%i per %i s with a burst of %i lets the burst through at once, in a window the rate takes to send it',
    (rate, unit, burst, window) => {
      expect(limitWindow(rate, unit, burst)).toEqual(window);
      // Window after window, the rate holds.
      expect((window.points / window.seconds) * unit).toBeCloseTo(rate, 6);
    },
  );

  test('a burst smaller than a second of the rate is raised to that second', () => {
    expect(limitWindow(1000, 1, 200)).toEqual({ points: 1000, seconds: 1 });
  });

  test('without a burst, the rate over its own unit', () => {
    expect(limitWindow(2, 60, 0)).toEqual({ points: 2, seconds: 60 });
  });
});
