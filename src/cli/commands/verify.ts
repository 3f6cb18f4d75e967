import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { readArchive } from '../../bundle/archive-read.js';
import { bundleDigest } from '../../bundle/digest.js';
import { DEFAULT_NAMESPACE } from '../../domain/scope.js';
import { jwkOf, publicKeyOfJwk, subjectName, verifyEnvelope } from '../../provenance/dsse.js';
import { type CliContext, examples, namespaceOption, ReportedFailure } from '../context.js';
import { DOWNLOAD_LIMITS } from '../local-skill.js';

/**
 * `skillreg verify`: the registry's attestation of a version checked end to end. The signature (by a
 * key pinned with --key, else one the registry lists), the statement's subject, and the digest of the
 * bytes served, as the archive and file by file, so bytes changed behind the registry's back show.
 */
export function registerVerifyCommand(program: Command, { output, clientOf }: CliContext): void {
  program
    .command('verify')
    .description("check a version's signed attestation against the bytes the registry serves")
    .argument('<name>', 'skill name')
    .option('--version <version>', 'exact version (default: what latest points at)')
    .option('--tag <tag>', 'dist-tag (default latest)')
    .option(
      '--key <file>',
      'trust only this public key: a PEM file, a JWK or a JWKS (JSON); by default the keys the registry lists at /.well-known/skillreg/keys.json',
    )
    .addOption(namespaceOption('read from'))
    .addHelpText(
      'after',
      `\nExits 1 when the signature, the subject or any digest does not match.\n${examples(
        'skillreg verify pdf-tools',
        'skillreg verify pdf-tools --version 1.2.0 --key registry-key.pem',
      )}`,
    )
    .action(
      async (
        name: string,
        options: { version?: string; tag?: string; key?: string; namespace?: string },
        command: Command,
      ) => {
        const client = clientOf(command);
        const fail = (problem: string): never => {
          output.error(`verification failed for ${name}: ${problem}`);
          throw new ReportedFailure();
        };
        const keys = options.key
          ? await pinnedKeys(options.key).catch((error: Error) =>
              fail(`--key ${options.key}: ${error.message}`),
            )
          : new Map(
              (await client.getSigningKeys()).value.keys.map(
                (jwk) => [jwk.kid, publicKeyOfJwk(jwk)] as const,
              ),
            );
        const selector = options.version ? { version: options.version } : { tag: options.tag };
        const envelope = (await client.getAttestation(name, selector)).value;
        const checked = verifyEnvelope(envelope, keys);
        if (!checked.ok) return fail(checked.problem);
        const { statement, kid } = checked;
        const { predicate } = statement;
        const subject = statement.subject[0]!;
        if (predicate.name !== name || (options.version && predicate.version !== options.version)) {
          fail(
            `the attestation is about ${subject.name}, not ${name}${options.version ? `@${options.version}` : ''}`,
          );
        }
        if (options.namespace && predicate.namespace !== options.namespace) {
          fail(`the attestation is about namespace ${predicate.namespace}, not ${options.namespace}`);
        }
        const expectedSubject = subjectName(predicate.namespace, name, predicate.version, DEFAULT_NAMESPACE);
        if (subject.name !== expectedSubject) {
          fail(`the attestation's subject is ${subject.name}, expected ${expectedSubject}`);
        }
        const signed = `sha256:${subject.digest.sha256}`;
        const exact = { version: predicate.version };
        // The zip is the archive stored at publish (installers get it through the discovery index).
        const bundle = await client.getBundle(name, { ...exact, format: 'zip', contents: 'as-published' });
        const files = await readArchive(bundle.value, 'zip', DOWNLOAD_LIMITS).catch((error: Error) =>
          fail(`the bundle served is not the archive the registry signed: ${error.message}`),
        );
        const archived = bundleDigest(files);
        if (archived !== signed) {
          fail(`the bundle served holds ${archived}, but the registry signed ${signed}`);
        }
        const served = [];
        for (const file of files) {
          served.push({
            path: file.path,
            bytes: (await client.getFile(name, file.path, exact)).value,
            mode: 0o644,
          });
        }
        const fileByFile = bundleDigest(served);
        if (fileByFile !== signed) {
          const changed = served.filter(
            (file, index) => Buffer.compare(file.bytes, files[index]!.bytes) !== 0,
          );
          fail(
            `the files served one by one hold ${fileByFile}, but the registry signed ${signed} (different: ${changed.map((file) => file.path).join(', ')})`,
          );
        }
        const { publisher } = predicate;
        if (typeof publisher === 'object' && publisher !== null) {
          // Trusted publishing: the CI identity the registry checked, where the version was built from.
          output.info(`source repository: ${publisher.repository}`);
          output.info(`source commit: ${publisher.sha ?? '(not given)'}`);
          if (publisher.workflow_ref) output.info(`workflow: ${publisher.workflow_ref}`);
          if (publisher.ref) output.info(`ref: ${publisher.ref}`);
          if (publisher.run_id) output.info(`run: ${publisher.run_id} (issuer ${publisher.issuer})`);
        }
        const publishedBy =
          typeof publisher === 'object' && publisher !== null
            ? `oidc ${publisher.repository}@${publisher.sha ?? '?'}`
            : publisher;
        output.info(
          `verified ${subject.name} ${signed}: signed by key ${kid} (publisher ${publishedBy}, published ${predicate.publishedAt}, scan ${predicate.scan?.verdict ?? 'none'}, registry ${predicate.registry}); ${files.length} files match`,
        );
      },
    );
}

/** The keys `--key` names: a PEM (public or private), a JWK, or a JWKS. */
async function pinnedKeys(file: string): Promise<Map<string, KeyObject>> {
  const text = await readFile(file, 'utf8');
  if (text.includes('-----BEGIN')) {
    const key = createPublicKey(text);
    return new Map([[jwkOf(key).kid, key]]);
  }
  const parsed = JSON.parse(text) as { keys?: { x?: unknown; kid?: string }[]; x?: unknown; kid?: string };
  const jwks = parsed.keys ?? [parsed];
  const keys = new Map<string, KeyObject>();
  for (const jwk of jwks) {
    if (typeof jwk.x !== 'string') throw new Error('not a PEM key, a JWK or a JWKS');
    const key = publicKeyOfJwk({ x: jwk.x });
    keys.set(jwk.kid ?? jwkOf(key).kid, key);
  }
  return keys;
}
