// The console's Query-protocol encoding, without a browser: nested parameters become AWS's
// `.member.N` / `.Field` form fields, and empty values are left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { queryBody } from '../../console/src/query.js';

test('lists and structures flatten as the Query protocol names them', () => {
  const body = queryBody({
    Action: 'CreateAutoScalingGroup',
    AutoScalingGroupName: 'a b&c=<d>',
    MinSize: 0,
    DesiredCapacity: undefined,
    Tags: [
      { Key: 'phantom:clouds', Value: 'hotel:2,sierra:10', PropagateAtLaunch: false },
      { Key: 'x', Value: '' },
    ],
  });
  assert.deepEqual([...new URLSearchParams(body)], [
    ['Action', 'CreateAutoScalingGroup'],
    ['AutoScalingGroupName', 'a b&c=<d>'],
    ['MinSize', '0'],
    ['Tags.member.1.Key', 'phantom:clouds'],
    ['Tags.member.1.Value', 'hotel:2,sierra:10'],
    ['Tags.member.1.PropagateAtLaunch', 'false'],
    ['Tags.member.2.Key', 'x'],
  ]);
});

test('an empty list sends nothing', () => {
  assert.equal(queryBody({ Action: 'X', SecurityGroups: [] }), 'Action=X');
});
