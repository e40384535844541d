/** The payments service's surface: what the rest of the house may import from it. */
export { paymentResumers, RESUMABLE_OPERATIONS } from './resumable-operations.ts';
export { CHARGE_ABSENT_FAILURE_CODE, reconcileUnknownPayments } from './reconcile-payments.ts';
export { reconcileUnknownRequests } from './reconcile-operations.ts';
export { CREATE_PAYMENT, CREATE_PAYMENT_FAULT_POINTS } from './create-payment.flow.ts';
export { finishWithOutcome, loadPayment } from './create-payment.finish.ts';
export { paymentsRouter } from './payments.router.ts';
export { REFUND_PAYMENT_FAULT_POINTS } from './refund-payment.flow.ts';
export { CAPTURE_PAYMENT_FAULT_POINTS } from './capture-payment.flow.ts';
export { CANCEL_PAYMENT_FAULT_POINTS } from './cancel-payment.flow.ts';
/** Its tables' entities: the composition lists them (app/entities.ts) for the process's one ORM. */
export { Payment } from './payment.entity.ts';
export { PaymentOperation } from './payment-operation.entity.ts';
export { PaymentSetting } from './payment-setting.entity.ts';
export { ProviderKeySecretRow } from './provider-key-secret.entity.ts';
export { referenceGuardOf, setReferenceGuard } from './reference-guard.ts';
export { PAYMENT_ERRORS } from './payments.errors.ts';
export * from './contract.ts';
export { ProviderKeySecret } from './provider-keys.ts';
