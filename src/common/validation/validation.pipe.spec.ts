import * as classValidator from 'class-validator';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsInt,
  IsObject,
  IsOptional,
  IsPositive,
  IsString,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { ValidationError } from '../errors/api-error';
import { FieldRule } from './field-rule';
import { NestedObject } from './nested.decorator';
import { OptionalBody } from './optional.decorator';
import { assertValid, createValidationPipe, MAX_FIELDS, MAX_ITEMS, MAX_VALUES } from './validation.pipe';

class Seat {
  @IsString()
  row: string;

  @IsInt()
  @Min(1)
  number: number;
}

class OtherSeat {
  @IsString()
  row: string;
}

class Booking {
  @ValidateNested({ each: true })
  @Type(() => Seat)
  seats: Seat[];

  @IsOptional()
  @IsObject()
  names?: Record<string, string>;
}

class Patch {
  @IsOptional()
  @IsString()
  name?: string;
}

@OptionalBody()
class OmittablePatch {
  @IsOptional()
  @IsString()
  name?: string;
}

/** The content checks are listed last, so class-validator runs and reports them first. */
class Label {
  @IsString()
  @MaxLength(20)
  name: string;

  @IsArray()
  @IsString({ each: true })
  @ArrayMaxSize(3)
  tags: string[];
}

describe('validation: what a value is comes before what it holds', () => {
  const pipe = createValidationPipe();

  it('reports a field left out as the wrong kind of value, not by the checks of its content', async () => {
    const refused = pipe.transform({}, { type: 'body', metatype: Label });
    await expect(refused).rejects.toMatchObject({
      message: 'Invalid request: name must be a string (and 1 more field).',
      // A missing list has no members: that they "must be strings" is not said of it.
      errors: { name: ['must be a string'], tags: ['must be an array'] },
    });
  });

  it('says only the first check of a kind that fails; a field rule speaks besides', async () => {
    class Key {
      @IsDefined({ message: 'is required (use "" for none)' })
      @IsString()
      @FieldRule('notNull', (value) => (value === null ? 'may not be null' : null))
      description: string;
    }
    await expect(pipe.transform({}, { type: 'body', metatype: Key })).rejects.toMatchObject({
      errors: { description: ['is required (use "" for none)'] },
    });
    await expect(pipe.transform({ description: 5 }, { type: 'body', metatype: Key })).rejects.toMatchObject({
      errors: { description: ['must be a string'] },
    });
    await expect(pipe.transform({ description: null }, { type: 'body', metatype: Key })).rejects.toMatchObject({
      errors: { description: ['is required (use "" for none)', 'may not be null'] },
    });
  });

  it('does not check the members of an array given where one object belongs', async () => {
    class Holder {
      @NestedObject(() => Label)
      label: Label;
    }
    await expect(
      pipe.transform({ label: [{ name: 5, tags: 'x' }] }, { type: 'body', metatype: Holder }),
    ).rejects.toMatchObject({ errors: { label: ['must be an object'] } });
    await expect(
      pipe.transform({ label: [{ name: 5, tags: 'x' }] }, { type: 'body', metatype: Holder }),
    ).rejects.not.toHaveProperty(['errors', 'label.0.name']);
  });

  it('says a message once, however many checks give it', async () => {
    class Page {
      @IsInt({ message: 'must be a whole number from 1 to 100' })
      @Min(1, { message: 'must be a whole number from 1 to 100' })
      @IsPositive({ message: 'must be a whole number from 1 to 100' })
      limit: number;
    }
    await expect(pipe.transform({ limit: 0 }, { type: 'body', metatype: Page })).rejects.toMatchObject({
      errors: { limit: ['must be a whole number from 1 to 100'] },
    });
  });

  it('reports only what fails of a value of the right kind', async () => {
    await expect(
      pipe.transform({ name: 'x'.repeat(21), tags: ['a', 1] }, { type: 'body', metatype: Label }),
    ).rejects.toMatchObject({
      errors: { name: ['must be shorter than or equal to 20 characters'], tags: ['each value must be a string'] },
    });
  });
});

describe('validation: a body is an object, and present unless its DTO may be left out', () => {
  const pipe = createValidationPipe();

  it.each([null, 5, 'x', true, [], [{ name: 'a' }]])('refuses %j even where every field is optional', async (value) => {
    await expect(pipe.transform(value, { type: 'body', metatype: Patch })).rejects.toMatchObject({
      errors: { body: ['must be an object'] },
    });
  });

  it('takes an object; no body at all only where the DTO may be left out (an empty one then)', async () => {
    expect(await pipe.transform({ name: 'a' }, { type: 'body', metatype: Patch })).toEqual({ name: 'a' });
    await expect(pipe.transform(undefined, { type: 'body', metatype: Patch })).rejects.toMatchObject({
      errors: { body: ['is required'] },
    });
    const omitted = await pipe.transform(undefined, { type: 'body', metatype: OmittablePatch });
    expect(omitted).toBeInstanceOf(OmittablePatch);
    expect(omitted).toEqual({});
    await expect(pipe.transform(null, { type: 'body', metatype: OmittablePatch })).rejects.toMatchObject({
      errors: { body: ['must be an object'] },
    });
  });
});

describe('validation: fields named like inherited members are refused, at any depth', () => {
  const pipe = createValidationPipe();
  const body = (json: string) => pipe.transform(JSON.parse(json), { type: 'body', metatype: Booking });

  it.each(['toString', 'constructor', 'valueOf', 'hasOwnProperty', '__proto__', 'prototype'])(
    'refuses %s in the DTO, in a nested DTO of an array and in a free-form map, with each path',
    async (name) => {
      await expect(body(`{"seats": [{"row": "A", "number": 1}], "${name}": "x"}`)).rejects.toMatchObject({
        errors: { [name]: ['should not exist'] },
      });
      await expect(body(`{"seats": [{"row": "A", "number": 1, "${name}": 2}]}`)).rejects.toMatchObject({
        errors: { [`seats.0.${name}`]: ['should not exist'] },
      });
      await expect(
        body(`{"seats": [{"row": "A", "number": 1}], "names": {"ok": "a", "${name}": "b"}}`),
      ).rejects.toMatchObject({ errors: { [`names.${name}`]: ['should not exist'] } });
      await expect(assertValid(Seat, JSON.parse(`{"row": "A", "number": 1, "${name}": 1}`))).rejects.toMatchObject({
        errors: { [name]: ['should not exist'] },
      });
    },
  );

  it('still takes a body without them, free-form keys included, and still refuses other unknown fields', async () => {
    const booking = (await body('{"seats": [{"row": "A", "number": 1}], "names": {"ana": "a"}}')) as Booking;
    expect(booking).toBeInstanceOf(Booking);
    expect(booking.names).toEqual({ ana: 'a' });
    await expect(body('{"seats": [], "other": 1}')).rejects.toMatchObject({ errors: { other: ['should not exist'] } });
  });
});

describe('validation: an object of more than MAX_FIELDS fields is refused before it is transformed', () => {
  const pipe = createValidationPipe();
  const body = (value: object) => pipe.transform(value, { type: 'body', metatype: Booking });
  const wide = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));

  it('refuses the body, a nested map and an object in an array, each with its path, and nothing else', async () => {
    await expect(body({ seats: [], ...wide(MAX_FIELDS) })).rejects.toMatchObject({
      errors: { body: [`has ${MAX_FIELDS + 1} fields; at most ${MAX_FIELDS} are taken`] },
    });
    await expect(body({ seats: [], names: wide(MAX_FIELDS + 5) })).rejects.toMatchObject({
      errors: { names: [`has ${MAX_FIELDS + 5} fields; at most ${MAX_FIELDS} are taken`] },
    });
    await expect(body({ seats: [{ row: 'A', number: 1, ...wide(MAX_FIELDS) }] })).rejects.toMatchObject({
      errors: { 'seats.0': [`has ${MAX_FIELDS + 2} fields; at most ${MAX_FIELDS} are taken`] },
    });
    await expect(assertValid(Seat, { row: 'A', number: 1, ...wide(MAX_FIELDS) } as Seat)).rejects.toMatchObject({
      errors: { body: [`has ${MAX_FIELDS + 2} fields; at most ${MAX_FIELDS} are taken`] },
    });
  });

  it('takes a map of exactly MAX_FIELDS fields, and an array of exactly MAX_ITEMS items', async () => {
    const booking = (await body({ seats: [], names: wide(MAX_FIELDS) })) as Booking;
    expect(Object.keys(booking.names!)).toHaveLength(MAX_FIELDS);
    await expect(
      body({ seats: Array.from({ length: MAX_ITEMS }, () => ({ row: 'A', number: 1 })) }),
    ).resolves.toBeInstanceOf(Booking);
  });

  it('refuses an array of more than MAX_ITEMS items with its path, before any item is checked', async () => {
    const validate = jest.spyOn(classValidator, 'validate');
    validate.mockClear();
    await expect(body({ seats: Array.from({ length: MAX_ITEMS + 1 }, () => ({})) })).rejects.toMatchObject({
      errors: { seats: [`has ${MAX_ITEMS + 1} items; at most ${MAX_ITEMS} are taken`] },
    });
    await expect(
      body({ seats: [], names: { list: Array.from({ length: 300_000 }, () => ({})) } }),
    ).rejects.toMatchObject({
      errors: { 'names.list': [`has 300000 items; at most ${MAX_ITEMS} are taken`] },
    });
    expect(validate).not.toHaveBeenCalled();
  });

  it('refuses a body of more than MAX_VALUES values in all, however they nest', async () => {
    const nested = Array.from({ length: MAX_ITEMS }, () => Array.from({ length: MAX_ITEMS }, () => ({})));
    await expect(body({ seats: [], names: { nested } })).rejects.toMatchObject({
      errors: {
        body: [
          `holds more than ${MAX_VALUES} values (fields and array items, at any depth); at most ${MAX_VALUES} are taken`,
        ],
      },
    });
  });
});

describe('validation: an object is checked once per DTO class', () => {
  const validate = jest.spyOn(classValidator, 'validate');
  beforeEach(() => validate.mockClear());

  it('assertValid does not check again an object it passed, and answers the same instance', async () => {
    const input = { row: 'A', number: 3 };
    const first = await assertValid(Seat, input);
    expect(first).toBeInstanceOf(Seat);
    expect(await assertValid(Seat, input)).toBe(first);
    expect(await assertValid(Seat, first)).toBe(first);
    expect(validate).toHaveBeenCalledTimes(1);
    // Another class, or another object with the same fields, is checked.
    await expect(assertValid(OtherSeat, input as OtherSeat)).rejects.toBeInstanceOf(ValidationError);
    await assertValid(Seat, { row: 'A', number: 3 });
    expect(validate).toHaveBeenCalledTimes(3);
  });

  it('an object that failed is checked again, and fails again', async () => {
    const input = { row: 'A', number: 0 };
    await expect(assertValid(Seat, input)).rejects.toBeInstanceOf(ValidationError);
    await expect(assertValid(Seat, input)).rejects.toMatchObject({ errors: { number: ['must not be less than 1'] } });
    expect(validate).toHaveBeenCalledTimes(2);
  });

  it("the request pipe's DTOs pass assertValid without a second check", async () => {
    const pipe = createValidationPipe();
    const body = (await pipe.transform({ row: 'B', number: 7 }, { type: 'body', metatype: Seat })) as Seat;
    expect(validate).toHaveBeenCalledTimes(1);
    expect(await assertValid(Seat, body)).toBe(body);
    expect(validate).toHaveBeenCalledTimes(1);
    // A value the pipe did not validate (no DTO class) is not taken as checked.
    const plain = (await pipe.transform({ row: 'C', number: 0 }, { type: 'body', metatype: Object })) as Seat;
    await expect(assertValid(Seat, plain)).rejects.toBeInstanceOf(ValidationError);
  });
});
