import type { AppConfig } from '../../config/config';
import { IdempotencyRepository } from './idempotency.repository';
import { canonicalParam, IdempotencyService, RequestShape } from './idempotency.service';

describe('canonicalParam', () => {
  it('lower-cases UUIDs', () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    expect(canonicalParam(id.toUpperCase())).toBe(id);
  });

  it('keeps other values as the router decoded them: a literal %2D is not a dash', () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    expect(canonicalParam(id.replace(/-/g, '%2D'))).toBe(id.replace(/-/g, '%2D'));
    expect(canonicalParam('ABC')).toBe('ABC');
    expect(canonicalParam('100%')).toBe('100%');
  });
});

describe('IdempotencyService.fingerprint', () => {
  const service = new IdempotencyService({} as IdempotencyRepository, { jwtSecret: 'x'.repeat(40) } as AppConfig);
  const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
  const shape: RequestShape = { method: 'POST', route: '/a/:id', params: { id }, body: { amount: '1.00', n: 1 } };

  it('is one value for every spelling of the same request', () => {
    expect(service.fingerprint({ ...shape, params: { id: id.toUpperCase() } })).toBe(service.fingerprint(shape));
    expect(service.fingerprint({ ...shape, body: { n: 1, amount: '1.00' } })).toBe(service.fingerprint(shape));
  });

  it('takes an empty object for no body (a client library that always sends `{}`)', () => {
    const bodiless = { ...shape, body: undefined };
    expect(service.fingerprint({ ...shape, body: {} })).toBe(service.fingerprint(bodiless));
    expect(service.fingerprint({ ...shape, body: [] })).not.toBe(service.fingerprint(bodiless));
  });

  it('tells another method, route, record or body apart', () => {
    const base = service.fingerprint(shape);
    expect(service.fingerprint({ ...shape, method: 'PUT' })).not.toBe(base);
    expect(service.fingerprint({ ...shape, route: '/b/:id' })).not.toBe(base);
    expect(service.fingerprint({ ...shape, params: { id: id.replace('0f8', '1f8') } })).not.toBe(base);
    expect(service.fingerprint({ ...shape, body: { amount: '1.01', n: 1 } })).not.toBe(base);
  });
});
