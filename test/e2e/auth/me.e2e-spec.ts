import { createTestApp, type TestApp } from '../../support/app';
import { createCompany } from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';

// GET /v1/me: the key's workspace as { id, name, plan } and nothing more.
describe('GET /v1/me', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  it('returns exactly id, name and plan of the key’s workspace', async () => {
    const { workspace, key } = await createTenant(t.prisma, { name: 'Umbrella Corp' });
    await createCompany(t.prisma, workspace.id);

    const response = await getWithKey(t.app, '/v1/me', key);

    expect(response.status).toBe(200);
    expect(response.body).toStrictEqual({
      id: workspace.id,
      name: 'Umbrella Corp',
      plan: 'growth',
    });
  });

  it('takes no parameter: an unknown one is a 400 like on the lists', async () => {
    const { key } = await createTenant(t.prisma);

    const response = await getWithKey(t.app, '/v1/me?foo=1', key);

    expect(response.status).toBe(400);
    expect(response.body.message).toStrictEqual(['property foo should not exist']);
  });

  it('names the workspace each key targets', async () => {
    const first = await createTenant(t.prisma, { name: 'First' });
    const second = await createTenant(t.prisma, { name: 'Second' });

    const [one, two] = await Promise.all([
      getWithKey(t.app, '/v1/me', first.key),
      getWithKey(t.app, '/v1/me', second.key),
    ]);

    expect([one.body, two.body]).toStrictEqual([
      { id: first.workspace.id, name: 'First', plan: 'growth' },
      { id: second.workspace.id, name: 'Second', plan: 'growth' },
    ]);
  });
});
