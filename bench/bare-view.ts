import { formatMoney, formatPercentage } from '../src/common/money/money';

/** A transactions row (pg's types: bigint as text, timestamps as Date) as the API shows it, for the bare yardsticks. */
export function bareTransactionView(t: Record<string, any>, rules: unknown[]) {
  return {
    id: t.id,
    seller: t.seller_id,
    amount: formatMoney(Number(t.amount)),
    currency: t.currency,
    payment_type: t.payment_type,
    installments: t.installments,
    card_brand: t.card_brand,
    card_last4: t.card_last4,
    entry_mode: t.entry_mode,
    status: t.status,
    description: t.description,
    source: t.source,
    reference: t.reference,
    customer: t.customer,
    fees: {
      percentage: formatPercentage(t.fee_percentage),
      fixed: formatMoney(Number(t.fee_fixed)),
      amount: formatMoney(Number(t.fee_amount)),
    },
    rate_plan: t.rate_plan_id,
    split_plan: t.split_plan_id,
    split: {
      shares: t.shares,
      developer_amount: formatMoney(Number(t.developer_amount)),
      participants_amount: formatMoney(Number(t.participants_amount)),
      seller_net: formatMoney(Number(t.seller_net)),
    },
    split_rules: rules,
    pix: t.pix,
    boleto: t.boleto,
    decline_reason: t.decline_reason,
    created_at: t.created_at.toISOString(),
    updated_at: t.updated_at.toISOString(),
    approved_at: t.approved_at?.toISOString() ?? null,
    voided_at: t.voided_at?.toISOString() ?? null,
    void_reason: t.void_reason,
  };
}
