import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.ts';
import { logFormatFor } from '../../lib/logging/log-format.ts';

describe('the log format', () => {
  it('is pretty for a terminal and JSON for anything else, unless LOG_FORMAT says', () => {
    expect(logFormatFor(undefined, true)).toBe('pretty');
    expect(logFormatFor(undefined, false)).toBe('json');
    // A closed or absent stdout (a daemon) has no isTTY at all.
    expect(logFormatFor(undefined, undefined)).toBe('json');
    expect(logFormatFor('json', true)).toBe('json');
    expect(logFormatFor('pretty', false)).toBe('pretty');
  });

  it('LOG_FORMAT is json or pretty; anything else stops the start, naming it', () => {
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(loadConfig({}).logFormat).toBeUndefined();
    expect(() => loadConfig({ LOG_FORMAT: 'text' })).toThrow(/^LOG_FORMAT /);
  });
});
