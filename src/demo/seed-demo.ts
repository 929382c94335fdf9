import type { INestApplicationContext } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { UsersService } from '../auth/users.service';
import { toPageRequest } from '../common/pagination/pagination';
import { APP_CONFIG, AppConfig } from '../config/config';
import { SAMPLE_RATE_PLANS_FILE } from '../config/paths';
import { PlansService } from '../plans/plans.service';
import { RatePlansSyncService } from '../plans/rate-plans-sync.service';
import { SellerResponseDto } from '../sellers/dto/seller.dto';
import { SellersService } from '../sellers/sellers.service';
import { TransactionsService } from '../transactions/transactions.service';
import { DepositsService } from '../virtual-accounts/deposits.service';
import { VirtualAccountsService } from '../virtual-accounts/virtual-accounts.service';

export const DEMO_ADMIN = { email: 'admin@demo.local', password: 'demo-admin-password', name: 'Demo Admin' };
export const DEMO_SELLER = { name: 'Loja Demo', document: '11222333000181', email: 'financeiro@lojademo.local' };
const DEMO_DEVELOPER = { name: 'Dev Parceiro Demo', document: '45997418000153', email: 'dev@parceirodemo.local' };
const DEMO_SPLIT_PLAN = 'Demo split (seed:demo)';
const CARD = { holder_name: 'CLIENTE DEMO', exp_month: 12, exp_year: 2032, cvv: '123' };

export interface DemoSummary {
  admin: typeof DEMO_ADMIN;
  sellerId: string;
  developerId: string;
  subaccounts: Record<string, string>;
  ratePlanId: string;
  splitPlanId: string;
  transactionsCreated: number;
  postingsCreated: number;
}

/**
 * The demo data set of `npm run cli -- seed:demo`: a superuser, a seller with the sample rate
 * plans and a split plan, sub-accounts as split participants, and transactions of each
 * payment type. Every step finds what an earlier run made before creating it, so the command
 * is safe to run twice.
 */
export async function seedDemo(app: INestApplicationContext): Promise<DemoSummary> {
  if (app.get<AppConfig>(APP_CONFIG).env === 'production') {
    throw new Error(
      'seed:demo makes a superuser with a published password: it refuses to run with NODE_ENV=production.',
    );
  }
  const sellers = app.get(SellersService);
  // Checked before anything is written: a seller holding a demo document that the demo did not make is refused.
  const demoSeller = await madeByDemo(sellers, DEMO_SELLER);
  const demoDeveloper = await madeByDemo(sellers, DEMO_DEVELOPER);
  const { user: admin } = await app
    .get(UsersService)
    .createOrPromoteSuperuser(DEMO_ADMIN.email, DEMO_ADMIN.password, DEMO_ADMIN.name);
  const sample = JSON.parse(readFileSync(SAMPLE_RATE_PLANS_FILE, 'utf8'));
  await app.get(RatePlansSyncService).sync(sample);

  const plans = app.get(PlansService);
  const ratePlan = (await plans.listRatePlans(toPageRequest({ limit: 1 }), 'Padrão 2026')).results[0];
  const splitPlan =
    (await plans.listSplitPlans(toPageRequest({ limit: 1 }), DEMO_SPLIT_PLAN)).results[0] ??
    (await plans.createSplitPlan({
      name: DEMO_SPLIT_PLAN,
      rate_plan: ratePlan.id,
      split_details:
        "{'credit1': {'Todas as bandeiras %': {'Programador': 0.5, 'Master': 1.0, 'Agente': 0.5}}," +
        " 'credit3': {'Todas as bandeiras %': {'Programador': 0.5, 'Master': 1.5}}," +
        " 'debit1': {'Todas as bandeiras %': {'Master': 0.4}, 'PIX': {'Master': 0.2}, 'Boleto': {'Master': 0.3}}}",
      split_details_online:
        "{'credit1': {'Todas as bandeiras %': {'Programador': 0.5, 'Master': 1.5, 'Agente': 0.5}}," +
        " 'credit3': {'Todas as bandeiras %': {'Programador': 0.5, 'Master': 2.0}}," +
        " 'debit1': {'PIX': {'Master': 0.2}, 'Boleto': {'Master': 0.3}}}",
    }));

  const seller = demoSeller ?? (await sellers.create(DEMO_SELLER));
  const developer = demoDeveloper ?? (await sellers.create(DEMO_DEVELOPER));
  const existing = (await sellers.listSubaccounts(seller.id, toPageRequest({ limit: 100 }))).results;
  const subaccounts: Record<string, string> = {};
  for (const label of ['Master', 'Agente']) {
    const name = `Demo ${label}`;
    subaccounts[label] =
      existing.find((s) => s.name === name)?.id ?? (await sellers.createSubaccount(seller.id, name)).id;
  }
  // Commercial terms are a superuser's: the demo sets them as its admin (audited as the system, outside a request).
  const asAdmin = {
    kind: 'user',
    id: admin.id,
    isSuperuser: true,
    accessVersion: '0',
    credentialId: `user:${admin.id}`,
  } as const;
  await sellers.update(asAdmin, seller.id, {
    rate_plan: ratePlan.id,
    split_plan: splitPlan.id,
    developer_account: developer.id,
    split_participants: subaccounts,
  });

  const transactions = app.get(TransactionsService);
  let transactionsCreated = 0;
  {
    const charges = [
      {
        amount: '150.00',
        payment_type: 'credit' as const,
        card: { ...CARD, number: '4111111111111111' },
        description: 'Camiseta',
      },
      {
        amount: '389.90',
        payment_type: 'credit' as const,
        installments: 3,
        card: { ...CARD, number: '5555555555554444' },
        description: 'Tênis',
      },
      {
        amount: '59.90',
        payment_type: 'credit' as const,
        card: { ...CARD, number: '4000000000000002' },
        description: 'Recusada',
      },
      {
        amount: '42.00',
        payment_type: 'debit' as const,
        entry_mode: 'card_present' as const,
        card: { ...CARD, number: '5555555555554444' },
        description: 'Balcão',
      },
      { amount: '75.50', payment_type: 'pix' as const, description: 'Pix pago' },
      { amount: '19.90', payment_type: 'pix' as const, description: 'Pix aguardando' },
      {
        amount: '210.00',
        payment_type: 'boleto' as const,
        customer: { name: 'Cliente Demo', document: '52998224725' },
        description: 'Boleto',
      },
    ];
    for (const [index, charge] of charges.entries()) {
      // Each charge has its reference (among the seed's own), so a run that stopped half-way is completed, not repeated.
      const reference = `seed-demo-${index + 1}`;
      const existing = await transactions.list(seller.id, { reference, source: 'seed' }, toPageRequest({ limit: 1 }));
      if (existing.results.length > 0) continue;
      const created = await transactions.create(seller.id, { ...charge, reference }, 'seed');
      if (charge.description === 'Pix pago') await transactions.approvePending(created.id);
      transactionsCreated += 1;
    }
  }
  // The sub-accounts' virtual accounts get money and one transfer, so a statement shows at once.
  const ledger = app.get(VirtualAccountsService);
  const agentStatement = await ledger.postings(seller.id, subaccounts.Agente, {}, toPageRequest({ limit: 1 }));
  let postingsCreated = 0;
  if (agentStatement.results.length === 0) {
    // Money enters by hand here, as a superuser would credit a reconciled wire (audited as the system).
    const deposits = app.get(DepositsService);
    for (const [account, amount, reference] of [
      [subaccounts.Master, '1500.00', 'seed-demo-1'],
      [subaccounts.Agente, '300.00', 'seed-demo-2'],
    ] as const) {
      await deposits.create(
        seller.id,
        account,
        {
          amount,
          method: 'manual',
          reason: 'Demo data (seed:demo)',
          description: 'Initial deposit',
          external_reference: reference,
        },
        { superuser: true },
      );
    }
    await ledger.transfer(seller.id, subaccounts.Master, {
      amount: '250.00',
      description: 'Commission to the agent',
      destination: { virtual_account: subaccounts.Agente },
    });
    postingsCreated = 3;
  }
  return {
    admin: DEMO_ADMIN,
    sellerId: seller.id,
    developerId: developer.id,
    subaccounts,
    ratePlanId: ratePlan.id,
    splitPlanId: splitPlan.id,
    transactionsCreated,
    postingsCreated,
  };
}

/**
 * The seller an earlier run made for `demo` (same document and the demo's own e-mail), or null
 * when there is none. A seller with the demo's document and another e-mail is somebody else's:
 * the demo refuses to run rather than take it over (set its plans, add sub-accounts, charge it).
 */
async function madeByDemo(sellers: SellersService, demo: typeof DEMO_SELLER): Promise<SellerResponseDto | null> {
  const found = await sellers.findByDocument(demo.document);
  if (found && found.email !== demo.email) {
    throw new Error(
      `seed:demo did not make the seller ${found.id} ("${found.name}", ${found.email}), which has the demo's ` +
        `document ${demo.document}: it leaves it unchanged and stops. Run it on a database without that seller.`,
    );
  }
  return found;
}

/** Ready-to-paste curl lines for a new user to explore the demo data. */
export function demoCurlLines(summary: DemoSummary, baseUrl: string): string[] {
  const auth = '-H "authorization: Bearer $TOKEN"';
  const json = "-H 'content-type: application/json'";
  const tx = `${baseUrl}/unified/accounts/sellers/${summary.sellerId}/transactions/`;
  return [
    `TOKEN=$(curl -s -X POST ${baseUrl}/user/login/ ${json} -d '{"email":"${summary.admin.email}","password":"${summary.admin.password}"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).access')`,
    `curl -s ${baseUrl}/user/me/ ${auth}`,
    `curl -s ${baseUrl}/sellers/${summary.sellerId}/ ${auth}`,
    `curl -s "${tx}?limit=5" ${auth}`,
    `curl -s "${tx}?payment_type=pix&status=pending" ${auth}`,
    `curl -s -X POST ${tx} ${auth} ${json} -H "Idempotency-Key: $(node -p 'crypto.randomUUID()')" -d '{"amount":"99.90","payment_type":"credit","installments":1,"card":{"number":"4111111111111111","holder_name":"ANA","exp_month":12,"exp_year":2032,"cvv":"123"}}'`,
    `curl -s -X POST ${baseUrl}/plans/plans/split/${summary.splitPlanId}/simulate/ ${auth} ${json} -d '{"amount":"100.00","payment_type":"credit","installments":1,"card_brand":"Visa","entry_mode":"online"}'`,
    `curl -s -X POST ${baseUrl}/integrations/apikeys/${summary.sellerId}/apikeys/ ${auth} ${json} -d '{"label":"demo","description":""}'`,
    `curl -s ${baseUrl}/uniconta/seller/${summary.sellerId}/virtualaccounts/ ${auth}`,
    `curl -s ${baseUrl}/uniconta/seller/${summary.sellerId}/virtualaccounts/${summary.subaccounts.Agente}/postings/ ${auth}`,
    `curl -s -X POST ${baseUrl}/uniconta/seller/${summary.sellerId}/virtualaccounts/${summary.subaccounts.Master}/transfer/ ${auth} ${json} -H "Idempotency-Key: $(node -p 'crypto.randomUUID()')" -d '{"amount":"10.00","description":"PIX out","destination":{"pix_key":"ana@example.com"}}'`,
  ];
}
