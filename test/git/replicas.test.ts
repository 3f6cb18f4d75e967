import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { files, skillMd, uniqueName } from '../helpers/bundles.js';
import { listening } from '../helpers/http.js';
import { publishTarball } from '../helpers/live-app.js';
import { until } from '../helpers/polling.js';
import { type Replicas, startReplicas } from '../helpers/replicas.js';

// Visibility of writes in the git faces and marketplaces across replicas of one PostgreSQL database: the
// replica that answered the publish serves it on the very next request, every other one within 1 s.

const postgresUrl = inject('postgresUrl');

describe.skipIf(!postgresUrl)('git refs and marketplaces on two replicas', () => {
  let replicas: Replicas;
  let urls: string[];
  beforeAll(async () => {
    replicas = await startReplicas(2);
    urls = await Promise.all(replicas.apps.map((app) => listening(app)));
  });
  afterAll(() => replicas?.close());

  const refs = async (base: string, name: string) => {
    const res = await fetch(`${base}/git/skills/${name}.git/info/refs?service=git-upload-pack`);
    return res.status === 200 ? res.text() : '';
  };
  const marketplaceVersion = async (base: string, name: string) => {
    const body = (await (await fetch(`${base}/marketplace.json`)).json()) as {
      plugins: { name: string; version: string }[];
    };
    return body.plugins.find((plugin) => plugin.name === name)?.version;
  };
  const bundle = (name: string, body: string) =>
    files({ 'SKILL.md': skillMd({ name, description: 'Seen by every replica.', body }) });

  it('a publish shows at once on the replica that took it and within 1 s on the other', async () => {
    const [here, there] = urls as [string, string];
    const name = uniqueName('git-visible');
    await publishTarball(here, bundle(name, 'one'));
    expect(await refs(here, name)).toContain('refs/tags/v1.0.0');
    expect(await marketplaceVersion(here, name)).toBe('1.0.0');
    await until(async () => (await refs(there, name)).includes('refs/tags/v1.0.0'), 1_000);
    // Both read the first version now; the next publish moves latest everywhere.
    expect(await marketplaceVersion(there, name)).toBe('1.0.0');
    await publishTarball(here, bundle(name, 'two'));
    expect(await refs(here, name)).toContain('refs/tags/v1.0.1');
    expect(await marketplaceVersion(here, name)).toBe('1.0.1');
    await until(async () => (await marketplaceVersion(there, name)) === '1.0.1', 1_000);
    await until(async () => (await refs(there, name)).includes('refs/tags/v1.0.1'), 1_000);
  });
});
