import { readFileSync } from 'node:fs';
import { SAMPLE_RATE_PLANS_FILE } from '../../src/config/paths';
import { RatePlansSyncService } from '../../src/plans/rate-plans-sync.service';
import { createSeller, TestUser } from './identity';
import type { TestApp } from './test-app';

export const SAMPLE_RATE_PLANS = JSON.parse(readFileSync(SAMPLE_RATE_PLANS_FILE, 'utf8'));

export const SPLIT_DETAILS = `{'credit1': {'Visa': {'Programador': 0.5, 'Master': 1.0, 'Agente': '0.75'}, 'Todas as bandeiras %': {'Master': 1.2}}, 'debit1': {'PIX': {'Master': 0.2}, 'Boleto': {'Master': 0.3}}}`;
export const SPLIT_DETAILS_ONLINE = `{'credit1': {'Todas as bandeiras %': {'Master': 2, 'Programador': 0.5}}, 'debit1': {'PIX': {'Master': 0.2}}}`;

export const CARDS = {
  visa: { number: '4111111111111111', holder_name: 'ANA SOUZA', exp_month: 12, exp_year: 2031, cvv: '123' },
  mastercard: { number: '5555555555554444', holder_name: 'ANA SOUZA', exp_month: 12, exp_year: 2031, cvv: '321' },
  declined: { number: '4000000000000002', holder_name: 'ANA SOUZA', exp_month: 12, exp_year: 2031, cvv: '999' },
};

export interface PayingSeller {
  sellerId: string;
  ratePlanId: string;
  splitPlanId: string;
  developer: string;
  master: string;
}

/**
 * A seller ready to take payments: the sample rate plans loaded, the "Padrão" plan and a split
 * plan on it, a developer account and a Master participant.
 */
export async function payingSeller(t: TestApp, superuser: TestUser): Promise<PayingSeller> {
  await t.app.get(RatePlansSyncService).sync(SAMPLE_RATE_PLANS);
  const rates = await t.http.get('/plans/plans/rates?search=padr', { token: superuser.access });
  const ratePlanId = rates.body.results[0].id;
  const plan = await t.http.post(
    '/plans/plans/split',
    {
      name: 'Test split',
      rate_plan: ratePlanId,
      split_details: SPLIT_DETAILS,
      split_details_online: SPLIT_DETAILS_ONLINE,
    },
    { token: superuser.access },
  );
  const sellerId = await createSeller(t, superuser);
  const developer = await createSeller(t, superuser, 'Developer');
  const master = (
    await t.http.post(`/sellers/${sellerId}/subaccounts`, { name: 'Master' }, { token: superuser.access })
  ).body.id;
  const patched = await t.http.patch(
    `/sellers/${sellerId}`,
    {
      rate_plan: ratePlanId,
      split_plan: plan.body.id,
      developer_account: developer,
      split_participants: { Master: master },
    },
    { token: superuser.access },
  );
  if (patched.status !== 200) throw new Error(`seller setup: ${patched.text}`);
  return { sellerId, ratePlanId, splitPlanId: plan.body.id, developer, master };
}
