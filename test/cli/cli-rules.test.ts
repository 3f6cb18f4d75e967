import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '../helpers/bundles.js';
import { cliInProcess } from '../helpers/cli-output.js';
import { ADMIN_TOKEN, adminAuth } from '../helpers/context.js';
import { type LiveApp, liveApp } from '../helpers/live-app.js';

/**
 * The CLI is the server's rules offline: what `validate` accepts and warns about is what a direct
 * POST /skills of the same folder (a tar of it, as the README shows) accepts and warns about, and
 * `publish`/`sync` send the folder so that the server applies the same fallbacks.
 */

const execFileAsync = promisify(execFile);
const cli = cliInProcess;

interface PublishAnswer {
  name: string;
  version: string;
  digest: string;
  created: boolean;
  warnings: { path: string; detail: string }[];
}

let ctx: LiveApp;
beforeAll(async () => {
  ctx = await liveApp('skillreg-cli-rules-');
});
afterAll(() => ctx?.close());

const global = (token = ADMIN_TOKEN) => ['--url', ctx.url, '--token', token];

async function write(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

/** POST /skills of `tar -czf - -C parent folder` (the README's way), into a namespace of its own. */
async function postFolder(folder: string, namespace: string): Promise<PublishAnswer> {
  const { stdout } = await execFileAsync(
    'tar',
    ['-czf', '-', '-C', path.dirname(folder), path.basename(folder)],
    { encoding: 'buffer' },
  );
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/skills?namespace=${namespace}`,
    headers: { ...adminAuth, 'content-type': 'application/gzip' },
    payload: stdout,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as PublishAnswer;
}

/** The warning lines the CLI prints for a list of issues (src/cli/output.ts printWarnings). */
const warningLines = (warnings: PublishAnswer['warnings']) =>
  warnings.map((warning) => `  warn   ${warning.path}: ${warning.detail}`);

describe('the CLI applies the server rules, fallbacks and warnings included', () => {
  it('a SKILL.md without frontmatter: validate and publish name it and warn exactly as the server does', async () => {
    const name = uniqueName('plain');
    const folder = path.join(ctx.work, 'plain', name);
    await write(
      path.join(folder, 'SKILL.md'),
      '# Plain skill\n\nTurns plain notes into a tidy summary. Use it for meeting notes.\n\nMore text.\n',
    );
    const direct = await postFolder(folder, uniqueName('direct'));
    expect(direct.name).toBe(name);
    expect(direct.warnings.map((warning) => warning.path).sort()).toEqual([
      'SKILL.md#description',
      'SKILL.md#name',
    ]);

    const validated = await cli(['validate', folder]);
    expect(validated.code, validated.stderr).toBe(0);
    expect(validated.stdout).toMatch(
      new RegExp(`^ok\\s+\\S+\\s+\\(${name}, 1 file, ${direct.digest}\\)$`, 'm'),
    );
    expect(validated.stderr.trimEnd().split('\n')).toEqual(warningLines(direct.warnings));

    const namespace = uniqueName('cli');
    const published = await cli(['publish', folder, '--namespace', namespace, ...global()]);
    expect(published.code, published.stderr).toBe(0);
    expect(published.stdout.trim()).toBe(`created    ${name}@1.0.0  ${direct.digest}`);
    // The server's own warnings, on stderr.
    expect(published.stderr.trimEnd().split('\n')).toEqual(warningLines(direct.warnings));
    const detail = (await ctx.app.inject(`/namespaces/${namespace}/skills/${name}`)).json() as {
      description: string;
    };
    expect(detail.description).toBe('Turns plain notes into a tidy summary. Use it for meeting notes.');

    // sync takes the same fallback: the folder's name, and nothing new for the same content.
    const synced = await cli(['sync', path.dirname(folder), '--namespace', namespace, ...global()]);
    expect(synced.code, synced.stderr).toBe(0);
    expect(synced.stdout).toMatch(new RegExp(`unchanged\\s+${name}\\s+1\\.0\\.0`));
    expect(synced.stderr).toContain(`warn   ${name}: SKILL.md#name: SKILL.md has no 'name'`);
  });

  it("a folder named otherwise than its SKILL.md's name is warned about, as the server warns", async () => {
    const name = uniqueName('named');
    const folder = path.join(ctx.work, 'renamed', 'other-folder');
    await write(
      path.join(folder, 'SKILL.md'),
      `---\nname: ${name}\ndescription: "Says what it does."\n---\n# Named\n\nBody.\n`,
    );
    const direct = await postFolder(folder, uniqueName('direct'));
    expect(direct.warnings).toEqual([
      {
        path: 'SKILL.md#name',
        detail: expect.stringContaining(
          `the folder is named 'other-folder' but SKILL.md says name: '${name}'`,
        ),
      },
    ]);
    const validated = await cli(['validate', folder]);
    expect(validated.code, validated.stderr).toBe(0);
    expect(validated.stderr.trimEnd().split('\n')).toEqual(warningLines(direct.warnings));

    const published = await cli(['publish', folder, '--namespace', uniqueName('cli'), ...global()]);
    expect(published.code, published.stderr).toBe(0);
    expect(published.stdout).toMatch(new RegExp(`^created\\s+${name}@1\\.0\\.0\\s+${direct.digest}$`, 'm'));
    expect(published.stderr.trimEnd().split('\n')).toEqual(warningLines(direct.warnings));
  });

  it('sync refuses a tree where two folders declare one name, naming both, and publishes nothing', async () => {
    const root = path.join(ctx.work, 'duplicates');
    const shared = uniqueName('twice');
    const alone = uniqueName('alone');
    await write(
      path.join(root, 'team-a', 'first', 'SKILL.md'),
      `---\nname: ${shared}\ndescription: A.\n---\nA\n`,
    );
    await write(
      path.join(root, 'team-b', 'second', 'SKILL.md'),
      `---\nname: ${shared}\ndescription: B.\n---\nB\n`,
    );
    await write(
      path.join(root, 'team-c', alone, 'SKILL.md'),
      `---\nname: ${alone}\ndescription: C.\n---\nC\n`,
    );
    const namespace = uniqueName('dup');

    for (const extra of [[], ['--dry-run']]) {
      const run = await cli(['sync', root, '--namespace', namespace, ...extra, ...global()]);
      expect(run.code, run.stdout + run.stderr).toBe(1);
      expect(run.stderr).toContain(
        `sync refused: skill name '${shared}' is declared by 2 folders: team-a/first, team-b/second`,
      );
      expect(run.stderr).toContain('nothing was published');
      expect(run.stdout).toBe('');
    }
    // Nothing from either folder, nor from the valid third: the namespace was never even created.
    const listed = await ctx.app.inject(`/namespaces/${namespace}/skills`);
    expect(listed.statusCode).toBe(404);
    expect((await ctx.app.inject(`/skills/${alone}`)).statusCode).toBe(404);

    // validate says so first, and fails.
    const validated = await cli(['validate', root]);
    expect(validated.code).toBe(1);
    expect(validated.stderr).toMatch(
      new RegExp(
        `FAIL {3}skill name '${shared}' is declared by 2 folders: \\S*team-a/first, \\S*team-b/second`,
      ),
    );
    expect(validated.stdout).toContain('3 valid, 0 invalid (3 skills checked); 1 name declared twice');
  });

  it('a 401 or 403 says which variable or flag to set, and which token to get', async () => {
    const folder = path.join(ctx.work, 'auth', uniqueName('auth'));
    await write(
      path.join(folder, 'SKILL.md'),
      `---\nname: ${path.basename(folder)}\ndescription: Auth.\n---\nA\n`,
    );
    const reader = (
      await ctx.app.inject({
        method: 'POST',
        url: '/tokens',
        headers: adminAuth,
        payload: { name: 'reader', scopes: ['read'] },
      })
    ).json() as { secret: string };
    const limited = (
      await ctx.app.inject({
        method: 'POST',
        url: '/tokens',
        headers: adminAuth,
        payload: { name: 'team', scopes: ['publish'], namespaces: ['team-*'] },
      })
    ).json() as { secret: string };

    const missing = await cli(['publish', folder, '--url', ctx.url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^401 Unauthorized - this request needs a bearer token with scope 'publish'/m,
    );
    expect(missing.stderr).toMatch(
      /^hint: set SKILLREG_TOKEN or pass --token with a token with scope 'publish' \(skillreg token create --name <name> --scope publish, run with an admin token\)$/m,
    );

    const unknown = await cli(['publish', folder, ...global('skr_not-a-token-this-registry-issued')]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^401 .*not known/m);
    expect(unknown.stderr).toMatch(
      /^hint: the token from --token or SKILLREG_TOKEN was refused: set SKILLREG_TOKEN or pass --token with a valid one/m,
    );

    const readOnly = await cli(['tag', 'anything', 'stable', '1.0.0', ...global(reader.secret)]);
    expect(readOnly.code).toBe(1);
    expect(readOnly.stderr).toMatch(/^403 .*scope 'publish'/m);
    expect(readOnly.stderr).toMatch(
      /^hint: set SKILLREG_TOKEN or pass --token with a token with scope 'publish'/m,
    );

    const notAdmin = await cli(['view', 'put', 'some-view', 'default', ...global(reader.secret)]);
    expect(notAdmin.code).toBe(1);
    expect(notAdmin.stderr).toMatch(
      /^hint: set SKILLREG_TOKEN or pass --token with an admin token \(the server's SKILLREG_ADMIN_TOKEN/m,
    );

    const elsewhere = await cli(['publish', folder, '--namespace', 'other', ...global(limited.secret)]);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/^403 .*may write only in the namespaces 'team-\*'/m);
    expect(elsewhere.stderr).toMatch(
      /^hint: set SKILLREG_TOKEN or pass --token with a token for namespace 'other' \(skillreg token create --name <name> --scope publish --namespace other/m,
    );

    // sync stops on the first refusal with the same hint.
    const sync = await cli(['sync', path.dirname(folder), '--url', ctx.url]);
    expect(sync.code).toBe(1);
    expect(sync.stderr).toMatch(/^sync stopped: 401 /m);
    expect(sync.stderr).toMatch(/^hint: set SKILLREG_TOKEN or pass --token/m);
  });
});
