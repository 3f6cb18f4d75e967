import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CORPUS, evaluateCorpus, evaluateFixtures, FIXTURES } from '../../bench/scan-eval.js';

// The shared data sits next to the project (../shared); a checkout without it skips these.
const present = existsSync(FIXTURES) && existsSync(CORPUS);

describe.skipIf(!present)('the scanner on the shared trust fixtures and the real corpus', () => {
  it('gives every fixture its expected verdict, a blocking finding naming one of its paths with a line', async () => {
    const outcomes = await evaluateFixtures();
    expect(outcomes.length).toBeGreaterThanOrEqual(25);
    expect(
      outcomes.filter((one) => !one.ok).map((one) => `${one.kind}/${one.name}: ${one.result.verdict}`),
    ).toEqual([]);
    for (const one of outcomes.filter((outcome) => outcome.expected === 'block')) {
      const blocking = one.result.findings.find(
        (finding) => finding.severity === 'high' || finding.severity === 'critical',
      );
      expect(blocking, one.name).toBeDefined();
    }
  }, 60_000);

  it('blocks at most 2% of the 248 benign corpus skills', async () => {
    const outcomes = await evaluateCorpus();
    const blocked = outcomes.filter((one) => one.result.verdict === 'block').map((one) => one.skill);
    expect(outcomes.length).toBeGreaterThanOrEqual(240);
    expect(blocked.length / outcomes.length, blocked.join(', ')).toBeLessThanOrEqual(0.02);
  }, 120_000);
});
