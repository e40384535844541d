import pg from 'pg';
import {
  maintainPartitions,
  type RetentionPolicy,
} from '../../services/kernel/idempotency/retention.ts';

/** The partitions a gateway with the default retention policy would have. */
export async function ensureTestPartitions(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await maintainPartitions(pool, TEST_RETENTION_POLICY);
  } finally {
    await pool.end();
  }
}

export const TEST_RETENTION_POLICY: RetentionPolicy = {
  ttlSeconds: 86_400,
  metadataRetentionSeconds: 7 * 86_400,
  partitionSeconds: 86_400,
};
