import { templatesOverlap } from './fastify-setup';

describe('templatesOverlap', () => {
  it('tells templates that some path matches both', () => {
    expect(templatesOverlap('/integrations/webhooks/:id/', '/integrations/webhooks/events/')).toBe(true);
    expect(templatesOverlap('/a/:x/b', '/a/:y/b')).toBe(true);
    expect(templatesOverlap('/a/:x/b/', '/a/c/:y')).toBe(true);
    expect(templatesOverlap('/files/*', '/files/:id/meta')).toBe(true);
    expect(templatesOverlap('/files/:id', '/*')).toBe(true);
    expect(templatesOverlap('/docs/*', '/docs/')).toBe(true);
  });

  it('tells templates that no path matches both', () => {
    expect(templatesOverlap('/sellers/:id/', '/sellers/:id/accesses/')).toBe(false);
    expect(templatesOverlap('/a/:x/b', '/a/:x/c')).toBe(false);
    expect(templatesOverlap('/user/login/', '/user/register/')).toBe(false);
    expect(templatesOverlap('/docs/*', '/sellers/:id/')).toBe(false);
    expect(templatesOverlap('/sellers/:id/', '/docs/*')).toBe(false);
    expect(templatesOverlap('/a/b/*', '/a/')).toBe(false);
  });
});
