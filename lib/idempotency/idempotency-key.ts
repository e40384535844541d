import { IdempotencyKeyInvalidError } from '../errors.ts';
import type { StoredAnswer } from './types.ts';

/** docs/api.md §2: 1 to 255 characters of [A-Za-z0-9._:-]. The DB CHECK repeats it as a backstop. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]{1,255}$/;

/** Throws IdempotencyKeyInvalidError (IDEMPOTENCY_KEY_INVALID, 400, nothing stored). */
export function assertIdempotencyKey(key: string): void {
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw new IdempotencyKeyInvalidError();
}

export interface IdempotencyInfo {
  key: string;
  replayed: boolean;
  firstRequestAt: string;
  expiresAt: string;
}

/** The `idempotency` field of every command's payload, from the stored answer. */
export function idempotencyInfo(
  stored: StoredAnswer,
  answer: { key: string; replayed: boolean },
): IdempotencyInfo {
  return {
    key: answer.key,
    replayed: answer.replayed,
    firstRequestAt: stored.firstRequestAt.toISOString(),
    expiresAt: stored.expiresAt.toISOString(),
  };
}
