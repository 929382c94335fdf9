import { Foundation1763700000000 } from './1763700000000-foundation';
import { IdentityAndAccess1763700100000 } from './1763700100000-identity-and-access';
import { Plans1763700200000 } from './1763700200000-plans';
import { Transactions1763700300000 } from './1763700300000-transactions';
import { Ledger1763700400000 } from './1763700400000-ledger';
import { AuditLog1763800000000 } from './1763800000000-audit-log';
import { LedgerDepositsPayouts1763800100000 } from './1763800100000-ledger-deposits-payouts';
import { IdempotencyOwnerScope1763800200000 } from './1763800200000-idempotency-owner-scope';
import { AuditLogPages1763800300000 } from './1763800300000-audit-log-pages';
import { UsersAdmin1763800310000 } from './1763800310000-users-admin';
import { Webhooks1763800400000 } from './1763800400000-webhooks';
import { TicketedEvents1763800500000 } from './1763800500000-ticketed-events';
import { TicketTypeNamesDeferred1763800510000 } from './1763800510000-ticket-type-names-deferred';
import { Subscriptions1763800600000 } from './1763800600000-subscriptions';
import { CredentialNotifications1763800800000 } from './1763800800000-credential-notifications';
import { OutboxSignalAfterCommit1763800900000 } from './1763800900000-outbox-signal-after-commit';
import { WebhookRetiredSecrets1763801000000 } from './1763801000000-webhook-retired-secrets';
import { IdempotencySellerChecks1763802000000 } from './1763802000000-idempotency-seller-checks';
import { TransactionFollowUps1763803000000 } from './1763803000000-transaction-follow-ups';
import { MailOutboxPending1763803100000 } from './1763803100000-mail-outbox-pending';
import { SellerTermsNotifications1763803200000 } from './1763803200000-seller-terms-notifications';
import { OrderItemNames1763803300000 } from './1763803300000-order-item-names';
import { UnresolvedChargesByAge1763803400000 } from './1763803400000-unresolved-charges-by-age';
import { TransactionListByCreation1763803500000 } from './1763803500000-transaction-list-by-creation';
import { SplitParticipantsLowerCase1763803600000 } from './1763803600000-split-participants-lower-case';
import { PostingsStampedWhenApplied1763803700000 } from './1763803700000-postings-stamped-when-applied';
import { EventFeedByCreation1763803800000 } from './1763803800000-event-feed-by-creation';
import { DropInsertionOrderIndexes1763803900000 } from './1763803900000-drop-insertion-order-indexes';
import { ReplayedBodiesAsSent1763804000000 } from './1763804000000-replayed-bodies-as-sent';
import { ManualRetryKeepsSchedule1763804100000 } from './1763804100000-manual-retry-keeps-schedule';
import { SplitRuleDeletedEventsCarryTheRule1763804200000 } from './1763804200000-split-rule-deleted-events-carry-the-rule';
import { ResendRequestedInFlight1763804300000 } from './1763804300000-resend-requested-in-flight';
import { TransactionListByAmount1763804400000 } from './1763804400000-transaction-list-by-amount';
import { RateLimitsSlidingWindow1763804500000 } from './1763804500000-rate-limits-sliding-window';

/** Every migration, oldest first. Start-up and `npm run cli -- migrate` apply the pending ones. */
export const migrations = [
  Foundation1763700000000,
  IdentityAndAccess1763700100000,
  Plans1763700200000,
  Transactions1763700300000,
  Ledger1763700400000,
  AuditLog1763800000000,
  LedgerDepositsPayouts1763800100000,
  IdempotencyOwnerScope1763800200000,
  AuditLogPages1763800300000,
  UsersAdmin1763800310000,
  Webhooks1763800400000,
  TicketedEvents1763800500000,
  TicketTypeNamesDeferred1763800510000,
  Subscriptions1763800600000,
  CredentialNotifications1763800800000,
  OutboxSignalAfterCommit1763800900000,
  WebhookRetiredSecrets1763801000000,
  IdempotencySellerChecks1763802000000,
  TransactionFollowUps1763803000000,
  MailOutboxPending1763803100000,
  SellerTermsNotifications1763803200000,
  OrderItemNames1763803300000,
  UnresolvedChargesByAge1763803400000,
  TransactionListByCreation1763803500000,
  SplitParticipantsLowerCase1763803600000,
  PostingsStampedWhenApplied1763803700000,
  EventFeedByCreation1763803800000,
  DropInsertionOrderIndexes1763803900000,
  ReplayedBodiesAsSent1763804000000,
  ManualRetryKeepsSchedule1763804100000,
  SplitRuleDeletedEventsCarryTheRule1763804200000,
  ResendRequestedInFlight1763804300000,
  TransactionListByAmount1763804400000,
  RateLimitsSlidingWindow1763804500000,
];
