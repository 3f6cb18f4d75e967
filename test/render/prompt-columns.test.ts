/**
 * The typed columns renderings read of a selection (src/render/prompt-columns.ts): carried from one
 * agent catalogue snapshot to the next (followPromptColumns) they equal the columns read afresh, and
 * a selection made from carried columns equals one made by reading every entry.
 */
import { describe, expect, it } from 'vitest';
import { applyDelta } from '../../src/cache/agent-catalogue.js';
import { type AgentSkill, selectAgentSkills } from '../../src/render/prompt.js';
import { followPromptColumns, knownPromptColumns, promptColumnsOf } from '../../src/render/prompt-columns.js';

function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

function skill(random: () => number, name: string): AgentSkill {
  const loads = random() < 0.3 ? Math.floor(random() * 5) : 0;
  const stored = random() < 0.9;
  const flags = [null, null, null, 'true', 'false', ' TRUE '];
  return {
    name,
    version: '1.0.0',
    tokens: { body: 10 },
    ...(stored ? {} : { description: `about ${name}`, digest: `d-${name}` }),
    promptTokens: stored
      ? { xml: Math.floor(random() * 90), markdown: random() < 0.1 ? -1 : 40, listed: 3 }
      : null,
    loadCount: loads,
    lastLoadedAt:
      loads > 0 || random() < 0.05 ? new Date(1_700_000_000_000 + Math.floor(random() * 1e6)) : null,
    disableModelInvocation: flags[Math.floor(random() * flags.length)]!,
  };
}

function plain(columns: ReturnType<typeof promptColumnsOf>) {
  return {
    loads: [...columns.loads],
    loadedAt: [...columns.loadedAt],
    xml: [...columns.xml],
    markdown: [...columns.markdown],
    disabled: [...columns.disabled],
    disabledCount: columns.disabledCount,
  };
}

describe('prompt columns carried from snapshot to snapshot', () => {
  it('equal the columns read afresh after replacements, additions and removals', async () => {
    const random = sequence(3);
    for (let round = 0; round < 200; round++) {
      const names = [
        ...new Set(
          Array.from({ length: Math.floor(random() * 120) }, () => `s-${Math.floor(random() * 500)}`),
        ),
      ].sort();
      let snapshot = {
        revision: 1,
        loadsRevision: 1,
        entries: names.map((name) => skill(random, name)) as readonly AgentSkill[],
      };
      promptColumnsOf(snapshot.entries);
      // A few deltas in a row, each carried from the one before.
      for (let step = 0; step < 3; step++) {
        const changed = Array.from(
          { length: Math.floor(random() * 6) },
          () => `s-${Math.floor(random() * 500)}`,
        );
        const entries = [...new Set(changed)].map((name) => skill(random, name));
        const removed = snapshot.entries.filter(() => random() < 0.05).map((entry) => entry.name);
        const { runs, ...next } = applyDelta(snapshot, {
          revision: 2 + step,
          loadsRevision: 2 + step,
          entries,
          removed,
        });
        // The same carried by comparing references, into another array of the same entries.
        const compared = next.entries.slice();
        followPromptColumns(snapshot.entries, compared);
        followPromptColumns(snapshot.entries, next.entries, runs);
        const carried = knownPromptColumns(next.entries);
        if (next.entries === snapshot.entries) continue;
        expect(carried, `round ${round}, step ${step}`).toBeDefined();
        const afresh = plain(promptColumnsOf(next.entries.slice()));
        expect(plain(carried!)).toEqual(afresh);
        expect(plain(knownPromptColumns(compared)!)).toEqual(afresh);
        // The runs name entries both snapshots hold, and every one they share.
        expect(runs, 'a delta with few new names says what it shares').toBeDefined();
        let sharedCount = 0;
        let last = -1;
        for (const run of runs!) {
          expect(run.length).toBeGreaterThan(0);
          expect(run.to).toBeGreaterThan(last);
          last = run.to + run.length - 1;
          for (let k = 0; k < run.length; k++)
            expect(next.entries[run.to + k]).toBe(snapshot.entries[run.from + k]);
          sharedCount += run.length;
        }
        const before = new Set(snapshot.entries);
        expect(sharedCount).toBe(next.entries.filter((entry) => before.has(entry)).length);
        // The selection made from carried columns is the one made by reading the entries.
        const fromCarried = await selectAgentSkills(
          { agentCatalogue: async () => next.entries as AgentSkill[] },
          {},
        );
        const fresh = next.entries.slice();
        const fromEntries = await selectAgentSkills({ agentCatalogue: async () => fresh }, {});
        expect(fromCarried.skills.map((entry) => entry.name)).toEqual(
          fromEntries.skills.map((entry) => entry.name),
        );
        expect(fromCarried.omitted).toEqual(fromEntries.omitted);
        expect(plain(promptColumnsOf(fromCarried.skills))).toEqual(
          plain(promptColumnsOf(fromEntries.skills.slice())),
        );
        snapshot = next;
      }
    }
  });
});
