import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BOTTOM,
  BOX_BORDERS,
  LABEL_WIDTH,
  LANE_HEIGHT,
  MAX_TICK_PX,
  TOP,
  timelineGeometry,
} from '../../packages/cli/web/src/timeline-geometry.js';
import { zeroGroupIndexes, zeroGroupText } from '../../packages/cli/web/src/zero-groups.js';

test('a timeline fills the width it is given: labels, track and borders add up to it', () => {
  const { px, trackWidth, height } = timelineGeometry(74, 18, 1184);
  assert.ok(px > 12 && px < MAX_TICK_PX, `px ${px}`);
  assert.ok(Math.abs(BOX_BORDERS + LABEL_WIDTH + trackWidth - 1184) < 1e-9);
  assert.equal(height, TOP + 18 * LANE_HEIGHT + BOTTOM, 'exactly the lanes and their margins');
});

test('too narrow a width keeps the ticks readable (the track scrolls); a short world is not stretched', () => {
  assert.equal(timelineGeometry(74, 18, 366).px, 12);
  assert.equal(timelineGeometry(500, 18, 1184).px, 3);
  const short = timelineGeometry(10, 4, 1184);
  assert.equal(short.px, MAX_TICK_PX);
  assert.ok(BOX_BORDERS + LABEL_WIDTH + short.trackWidth < 1184, 'its box hugs it instead');
  assert.equal(timelineGeometry(0, 1, 0).px, 12, 'an empty world still draws');
});

test('a group is a zero group when every series is 0 there', () => {
  assert.deepEqual(
    zeroGroupIndexes(4, [
      [0, 1, 0, 0],
      [0, 0, 0, 2],
    ]),
    [0, 2],
  );
  assert.deepEqual(zeroGroupIndexes(3, []), [], 'no series shown: nothing to label');
  assert.deepEqual(zeroGroupIndexes(2, [[0, undefined]]), [0, 1], 'a missing value counts as 0');
  assert.equal(zeroGroupText(100), 'all 0');
  assert.equal(zeroGroupText(25), '0');
});
