// The status-bar model: the server's mercury/status states, and the client's own.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { fromNotification, view } from '../src/status';

test('status bar: loading, ready, error, disabled', () => {
  assert.deepEqual(fromNotification({ state: 'loading', message: 'loading the embedded model' }),
    { state: 'loading', message: 'loading the embedded model' });
  assert.equal(fromNotification({ state: 'bogus' }).state, 'starting');
  assert.equal(view('ready').text, '$(sparkle) mercury');
  assert.equal(view('loading').text, '$(loading~spin) mercury: loading');
  const error = view('error', 'no such model');
  assert.ok(error.error && error.text.includes('error') && error.tooltip.includes('no such model'));
  assert.match(view('disabled').tooltip, /disabled/);
});
