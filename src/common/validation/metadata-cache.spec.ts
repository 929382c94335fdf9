import { IsInt, IsString, Min, getMetadataStorage, validate } from 'class-validator';
import { cacheValidationMetadata } from './metadata-cache';

class Ticket {
  @IsString()
  name: string;
}

class Seat extends Ticket {
  @IsInt()
  @Min(1)
  row: number;
}

const failing = async (value: object) => (await validate(value)).map((error) => error.property).sort();

describe('cacheValidationMetadata', () => {
  beforeAll(() => cacheValidationMetadata());

  it('answers the rules class-validator finds, inherited ones included, and the same answer again', async () => {
    const storage = getMetadataStorage();
    const first = storage.getTargetValidationMetadatas(Seat, '', false, false);
    expect(first.map((rule) => `${rule.propertyName}:${rule.name ?? rule.type}`).sort()).toEqual([
      'name:isString',
      'row:isInt',
      'row:min',
    ]);
    expect(storage.getTargetValidationMetadatas(Seat, '', false, false)).toBe(first);
    expect(storage.getTargetValidationMetadatas(Seat, '', false, false, ['admin'])).not.toBe(first);
    expect(await failing(Object.assign(new Seat(), { name: 7, row: 0 }))).toEqual(['name', 'row']);
    expect(await failing(Object.assign(new Seat(), { name: 'A', row: 2 }))).toEqual([]);
  });

  it('forgets its answers when a rule is added after them', async () => {
    expect(await failing(Object.assign(new Seat(), { name: 'A', row: 2, gate: 'x' }))).toEqual([]);
    IsInt()(Seat.prototype, 'gate');
    expect(await failing(Object.assign(new Seat(), { name: 'A', row: 2, gate: 'x' }))).toEqual(['gate']);
    // A rule added to the parent reaches the child too.
    IsString()(Ticket.prototype, 'section');
    expect(await failing(Object.assign(new Seat(), { name: 'A', row: 2, gate: 3, section: 4 }))).toEqual(['section']);
  });
});
