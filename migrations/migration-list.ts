import { readFileSync } from 'node:fs';
import { Migration } from '@mikro-orm/migrations';
import type { MigrationObject } from '@mikro-orm/core';
import { MigrationDownRefusedError } from '../lib/errors.ts';

/**
 * The migrations, in order. Append-only once merged: a change to the schema is a new file.
 * Each is a plain SQL file beside this one, run by MikroORM's migrator in one transaction.
 * `down` throws MigrationDownRefusedError: a rollback is a new forward migration.
 */
const SQL_FILES = [
  '0001-initial-schema.sql',
  '0002-unknown-outcomes.sql',
  '0003-payment-operations.sql',
  '0004-refunds.sql',
  '0005-outbox-ledger-webhooks.sql',
  '0006-ledger-balanced.sql',
  '0007-retention-partitions.sql',
  '0008-payments-fillfactor.sql',
  '0009-fail-unless.sql',
  '0010-keyed-request-hashes.sql',
  '0011-key-waiters.sql',
  '0012-api-keys.sql',
  '0013-webhook-endpoint-management.sql',
  '0014-outbox-subscriptions.sql',
  '0015-outbox-claim-lease.sql',
  '0016-outbox-event-log-cursors.sql',
  '0017-reference-guard.sql',
  '0018-provider-key-secret.sql',
  '0019-outbox-retention.sql',
  '0020-fair-deliveries.sql',
  '0021-api-key-hmac.sql',
  '0022-payment-versions.sql',
  '0023-provider-keys-hashed.sql',
  '0024-postings-carry-their-entry.sql',
  '0025-payments-changing-columns-last.sql',
  '0026-answers-sealed-in-binary.sql',
  '0027-unfinished-found-by-low-water.sql',
  '0028-key-waiters-woken-after-the-update.sql',
] as const;

function sqlMigration(file: string): MigrationObject {
  const sql = readFileSync(new URL(file, import.meta.url), 'utf8');
  const name = file.replace(/\.sql$/, '');
  class SqlFileMigration extends Migration {
    override up(): void {
      this.addSql(sql);
    }

    override down(): void {
      throw new MigrationDownRefusedError(name);
    }
  }
  return { name, class: SqlFileMigration };
}

export const migrationsList = SQL_FILES.map(sqlMigration);

/** The name of the newest migration; `/readyz` answers ready only once it has run. */
export const LATEST_MIGRATION: string = migrationsList[migrationsList.length - 1]!.name;
