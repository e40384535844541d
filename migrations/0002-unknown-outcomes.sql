-- Unknown outcomes. A request whose provider call keeps ending without an answer becomes
-- 'unknown' after a bounded number of attempts: it leaves the recovery worker's hands and waits
-- for reconciliation against the provider's statement (or an operator). It is never reported
-- as failed merely because nobody answered.
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_state_ck;
ALTER TABLE idempotency_keys
  ADD CONSTRAINT idempotency_keys_state_ck CHECK (state IN ('started', 'unknown', 'finished'));

ALTER TABLE idempotency_keys
  -- The recovery worker leaves a released request alone until then (exponential backoff); a
  -- client retry may still take it over at once.
  ADD COLUMN next_attempt_at timestamptz,
  ADD COLUMN last_attempt_at timestamptz,
  -- 'timeout' (we do not know) or 'unavailable' (the provider refused before doing anything).
  ADD COLUMN last_attempt_outcome text;

-- Every settlement or manual intervention, with who or what decided it and why. A settlement
-- that finishes a request is written in the same transaction as its final phase.
CREATE TABLE idempotency_interventions (
  id                  bigserial   NOT NULL,
  tenant_id           uuid        NOT NULL,
  operation           text        NOT NULL,
  key                 text        NOT NULL,
  action              text        NOT NULL,
  decided_by          text        NOT NULL,
  reason              text        NOT NULL,
  provider_reference  text,
  decided_at          timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT idempotency_interventions_pk PRIMARY KEY (id),
  CONSTRAINT idempotency_interventions_action_ck CHECK (
    action IN ('reconciled_charge_found', 'reconciled_charge_absent', 'redriven',
               'resolved_charged', 'resolved_not_charged'))
);

CREATE INDEX idempotency_interventions_scope_ix
  ON idempotency_interventions (tenant_id, operation, key, decided_at);
