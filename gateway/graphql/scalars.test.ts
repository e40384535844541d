import { Kind } from 'graphql';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../lib/errors.ts';
import { DateTimeScalar } from './scalars.ts';

describe('DateTime checks every argument of its type, before any resolver', () => {
  it('passes a real instant on in UTC, from a variable or a literal', () => {
    expect(DateTimeScalar.parseValue('2026-06-01T12:00:00.5+02:00')).toBe('2026-06-01T10:00:00.5Z');
    expect(DateTimeScalar.parseLiteral({ kind: Kind.STRING, value: '2026-06-01T12:00:00Z' })).toBe(
      '2026-06-01T12:00:00Z',
    );
  });

  it.each(['2026-02-30T00:00:00Z', '0000-01-01T00:00:00Z', '2026-01-01T00:00:00+24:00'])(
    'refuses %s as BAD_USER_INPUT',
    (text) => {
      for (const parse of [
        () => DateTimeScalar.parseValue(text),
        () => DateTimeScalar.parseLiteral({ kind: Kind.STRING, value: text }),
      ]) {
        expect(parse).toThrow(AppError);
        expect(parse).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }) as Error);
      }
    },
  );
});
