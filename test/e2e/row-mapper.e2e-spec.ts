import { DataSource } from 'typeorm';
import { RatePlan } from '../../src/plans/entities/rate-plan.entity';
import { SplitPlan } from '../../src/plans/entities/split-plan.entity';
import { PlansRepository } from '../../src/plans/plans.repository';
import { Seller } from '../../src/sellers/entities/seller.entity';
import { SellersRepository } from '../../src/sellers/sellers.repository';
import { SplitRule } from '../../src/transactions/entities/split-rule.entity';
import { Transaction } from '../../src/transactions/entities/transaction.entity';
import { RowMapper } from '../../src/database/row-mapper';
import { TransactionsRepository } from '../../src/transactions/transactions.repository';
import { createUser, TestUser } from '../support/identity';
import { CARDS, PayingSeller, payingSeller } from '../support/payments';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The hot reads that skip TypeORM's query builder (RowMapper) answer exactly the entities
 * TypeORM's own hydration gives for the same rows.
 */
describe('RowMapper: raw reads equal TypeORM hydration', () => {
  let t: TestApp;
  let superuser: TestUser;
  let s: PayingSeller;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    s = await payingSeller(t, superuser);
  });
  afterAll(() => t.close());

  it('a transaction with its active split rules', async () => {
    const base = `/unified/accounts/sellers/${s.sellerId}/transactions`;
    const created = await t.http.post(
      base,
      {
        amount: '123.45',
        payment_type: 'credit',
        installments: 3,
        card: CARDS.visa,
        entry_mode: 'card_present',
        description: 'row mapper',
        reference: 'ref-1',
        customer: { name: 'Ana', email: 'ana@example.com' },
      },
      { token: superuser.access },
    );
    expect(created.status).toBe(201);
    const id = created.body.id;
    const rule = (body: object) => t.http.post(`${base}/${id}/split`, body, { token: superuser.access });
    const fixed = await rule({ recipient: s.master, amount: '10.00', amount_type: 'fixed' });
    const removed = await rule({ recipient: s.master, amount: '1.00', amount_type: 'fixed' });
    const percentage = await rule({ recipient: s.developer, amount: '12.5', amount_type: 'percentage' });
    expect((await t.http.delete(`${base}/${id}/split/${removed.body.id}`, { token: superuser.access })).status).toBe(
      204,
    );

    const found = await t.app.get(TransactionsRepository).findWithRulesForSeller(s.sellerId, id);
    const dataSource = t.app.get(DataSource);
    const expected = await dataSource.getRepository(Transaction).findOneByOrFail({ id });
    const expectedRules = await dataSource
      .getRepository(SplitRule)
      .find({ where: [{ id: fixed.body.id }, { id: percentage.body.id }], order: { seq: 'ASC' } });
    expect(found).not.toBeNull();
    expect({ ...found!.transaction }).toStrictEqual({ ...expected });
    expect(found!.rules.map((r) => ({ ...r }))).toStrictEqual(expectedRules.map((r) => ({ ...r })));
    expect(found!.rules).toHaveLength(2);

    expect(await t.app.get(TransactionsRepository).findWithRulesForSeller(s.developer, id)).toBeNull();
  });

  it('an update answers the row as TypeORM then reads it (jsonb, dates, the update date set)', async () => {
    const base = `/unified/accounts/sellers/${s.sellerId}/transactions`;
    const created = await t.http.post(
      base,
      { amount: '10.00', payment_type: 'credit', card: CARDS.visa },
      { token: superuser.access },
    );
    const dataSource = t.app.get(DataSource);
    const before = await dataSource.getRepository(Transaction).findOneByOrFail({ id: created.body.id });
    const updated = await dataSource.transaction((manager) =>
      t.app.get(TransactionsRepository).update(manager, created.body.id, {
        description: 'changed',
        pix: { qr_code: 'x', expires_at: '2030-01-01T00:00:00.000Z' },
        customer: { name: 'Bia', email: 'bia@example.com' },
        approvedAt: new Date('2030-01-02T03:04:05.678Z'),
      }),
    );
    const after = await dataSource.getRepository(Transaction).findOneByOrFail({ id: created.body.id });
    expect({ ...updated }).toStrictEqual({ ...after });
    expect(after).toMatchObject({ description: 'changed', amount: 1000, customer: { name: 'Bia' } });
    expect(after.pix).toEqual({ qr_code: 'x', expires_at: '2030-01-01T00:00:00.000Z' });
    expect(after.approvedAt?.toISOString()).toBe('2030-01-02T03:04:05.678Z');
    expect(after.updatedAt.getTime()).toBeGreaterThanOrEqual(before.updatedAt.getTime());
  });

  it("a pending charge's first answer: written only while unanswered, with the rules of its view", async () => {
    const base = `/unified/accounts/sellers/${s.sellerId}/transactions`;
    const created = await t.http.post(
      base,
      { amount: '10.00', payment_type: 'credit', card: CARDS.visa },
      { token: superuser.access },
    );
    const id = created.body.id;
    const rule = await t.http.post(
      `${base}/${id}/split`,
      { recipient: s.master, amount: '1.00', amount_type: 'fixed' },
      { token: superuser.access },
    );
    expect(rule.status).toBe(201);
    const dataSource = t.app.get(DataSource);
    // Back to a pending charge the processor has not answered (as between the two steps of a charge).
    await dataSource.query(
      `UPDATE transactions SET status = 'pending', processor_reference = NULL, approved_at = NULL WHERE id = $1`,
      [id],
    );
    const settle = () =>
      dataSource.transaction((manager) =>
        t.app.get(TransactionsRepository).settleUnanswered(manager, id, {
          status: 'approved',
          processorReference: 'sbx_again',
          approvedAt: new Date('2030-01-02T03:04:05.678Z'),
        }),
      );
    const answered = await settle();
    expect({ ...answered!.transaction }).toStrictEqual({
      ...(await dataSource.getRepository(Transaction).findOneByOrFail({ id })),
    });
    expect(answered!.transaction).toMatchObject({ status: 'approved', processorReference: 'sbx_again' });
    expect(answered!.rules.map((r) => ({ ...r }))).toStrictEqual(
      (await dataSource.getRepository(SplitRule).findBy({ transactionId: id })).map((r) => ({ ...r })),
    );
    expect(answered!.rules.map((r) => r.id)).toEqual([rule.body.id]);
    // Answered already: nothing changes.
    expect(await settle()).toBeNull();
  });

  it('a seller and a rate plan', async () => {
    const dataSource = t.app.get(DataSource);
    const seller = await t.app.get(SellersRepository).findSeller(s.sellerId);
    expect({ ...seller }).toStrictEqual({
      ...(await dataSource.getRepository(Seller).findOneByOrFail({ id: s.sellerId })),
    });
    expect(seller?.splitParticipants).toEqual({ Master: s.master });
    const plan = await t.app.get(PlansRepository).findRatePlan(s.ratePlanId);
    expect({ ...plan }).toStrictEqual({
      ...(await dataSource.getRepository(RatePlan).findOneByOrFail({ id: s.ratePlanId })),
    });
    expect(await t.app.get(SellersRepository).findSeller('00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  it('a seller with its rate and split plans, in one statement; null plans when it has none', async () => {
    const dataSource = t.app.get(DataSource);
    const sellers = t.app.get(SellersRepository);
    const found = await sellers.findSellerWithPlans(s.sellerId);
    expect(found).not.toBeNull();
    expect({ ...found!.seller }).toStrictEqual({
      ...(await dataSource.getRepository(Seller).findOneByOrFail({ id: s.sellerId })),
    });
    expect({ ...found!.ratePlan }).toStrictEqual({
      ...(await dataSource.getRepository(RatePlan).findOneByOrFail({ id: s.ratePlanId })),
    });
    expect({ ...found!.splitPlan }).toStrictEqual({
      ...(await dataSource.getRepository(SplitPlan).findOneByOrFail({ id: s.splitPlanId })),
    });

    // The developer account is a seller with no plans set.
    const bare = await sellers.findSellerWithPlans(s.developer);
    expect(bare).toMatchObject({ seller: { id: s.developer, ratePlanId: null }, ratePlan: null, splitPlan: null });
    expect(await sellers.findSellerWithPlans('00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  it('writes: one statement text per set of columns written, values in column order, unknown properties refused', () => {
    const rows = new RowMapper<Transaction>(t.app.get(DataSource).getMetadata(Transaction));
    const template = jest.fn((set: string) => `UPDATE transactions t SET ${set} WHERE t.id = $1`);
    const first = rows.update({ status: 'approved', amount: 100 }, 1, template);
    const again = rows.update({ amount: 200, status: 'declined' }, 1, template);
    expect(template).toHaveBeenCalledTimes(1);
    expect(again.text).toBe(first.text);
    expect(first.text).toBe(
      'UPDATE transactions t SET "amount" = $2, "status" = $3, "updated_at" = now() WHERE t.id = $1',
    );
    expect(again.values).toEqual([200, 'declined']);
    // Another set of columns, or the same set numbered from another offset: another text.
    expect(rows.update({ status: 'approved' }, 1, template).text).toBe(
      'UPDATE transactions t SET "status" = $2, "updated_at" = now() WHERE t.id = $1',
    );
    expect(rows.update({ status: 'approved', amount: 1 }, 2, template).text).toContain('"amount" = $3');
    expect(template).toHaveBeenCalledTimes(3);

    const insert = rows.insert(
      { id: 'a', pix: { qr_code: 'x', expires_at: 'y' } },
      (columns, placeholders) => `INSERT INTO transactions (${columns}) VALUES (${placeholders})`,
    );
    expect(insert.text).toBe('INSERT INTO transactions ("id", "pix") VALUES ($1, $2)');
    expect(insert.values).toEqual(['a', '{"qr_code":"x","expires_at":"y"}']);
    expect(() => rows.update({ nope: 1 } as Partial<Transaction>, 1, template)).toThrow('no column for property nope');
  });
});
