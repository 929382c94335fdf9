import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A seller's `split_participants` map labels to unified account ids as JSON, which kept the case
 * an id was sent in; the service now stores them in lower case, the form PostgreSQL gives every
 * other id in: the ids stored before are put in that form too.
 */
export class SplitParticipantsLowerCase1763803600000 implements MigrationInterface {
  name = 'SplitParticipantsLowerCase1763803600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE sellers s
         SET split_participants = (SELECT jsonb_object_agg(e.key, lower(e.value)) FROM jsonb_each_text(s.split_participants) e)
       WHERE EXISTS (SELECT 1 FROM jsonb_each_text(s.split_participants) e WHERE e.value <> lower(e.value))`);
  }

  async down(): Promise<void> {
    // The case the ids were sent in is not kept: nothing to undo.
  }
}
