import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A unified account under a seller. */
@Entity('subaccounts')
export class Subaccount {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'bigint', insert: false, update: false })
  seq: string;

  @Column('uuid', { name: 'seller_id' })
  sellerId: string;

  @Column('text')
  name: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
