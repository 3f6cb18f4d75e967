/**
 * The search index's table of slots by name (src/search/name-slots.ts) against a Map doing the same
 * operations: any sequence of puts, replacements, removals and renumberings answers alike.
 */
import { describe, expect, it } from 'vitest';
import { NameSlots } from '../../src/search/name-slots.js';
import { seededRandom as random } from '../helpers/random.js';

/** The index's side: names by slot, a new slot per put, undefined once removed. */
class Model {
  names: (string | undefined)[] = [];
  readonly slots = new NameSlots((slot) => this.names[slot]);
  readonly expected = new Map<string, number>();

  put(name: string): void {
    this.remove(name);
    const slot = this.names.length;
    this.names.push(name);
    this.slots.set(name, slot);
    this.expected.set(name, slot);
  }

  remove(name: string): void {
    const slot = this.expected.get(name);
    expect(this.slots.delete(name)).toBe(slot !== undefined);
    if (slot === undefined) return;
    this.names[slot] = undefined;
    this.expected.delete(name);
  }

  /** A new slot for a name held, put before the old one is let go (set replaces the slot). */
  move(name: string): void {
    const old = this.expected.get(name);
    if (old === undefined) {
      this.put(name);
      return;
    }
    const slot = this.names.length;
    this.names.push(name);
    this.slots.set(name, slot);
    this.names[old] = undefined;
    this.expected.set(name, slot);
  }

  renumber(): void {
    const names = this.names.filter((name): name is string => name !== undefined);
    this.names = names;
    this.slots.reset(names);
    this.expected.clear();
    names.forEach((name, slot) => {
      this.expected.set(name, slot);
    });
  }

  check(asked: readonly string[]): void {
    expect(this.slots.size).toBe(this.expected.size);
    for (const name of asked) {
      expect(this.slots.get(name)).toBe(this.expected.get(name));
      expect(this.slots.has(name)).toBe(this.expected.has(name));
    }
  }
}

describe('slots by name', () => {
  it('answers as a Map over random puts, replacements, removals and renumberings', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const next = random(seed);
      const model = new Model();
      // Few distinct names, so most operations replace or remove one held (REMOVED cells pile up).
      const pool = Array.from({ length: 40 + seed * 300 }, (_, i) => `skill-${(i * 7919).toString(36)}-${i}`);
      for (let step = 0; step < 6000; step++) {
        const name = pool[Math.floor(next() * pool.length)]!;
        const roll = next();
        if (roll < 0.45) model.put(name);
        else if (roll < 0.55) model.move(name);
        else if (roll < 0.95) model.remove(name);
        else if (roll < 0.955) model.renumber();
        if (step % 500 === 0) model.check(pool);
      }
      model.check(pool);
    }
  });

  it('finds names that share a cell, and names of any characters', () => {
    const model = new Model();
    const names = ['a', 'b', '', 'ß-straße', '审查', '😀-emoji', 'x'.repeat(300)];
    for (let i = 0; i < 2000; i++) names.push(`n${i}`);
    for (const name of names) model.put(name);
    model.check([...names, 'missing', 'n2000']);
    for (const name of names.filter((_, i) => i % 3 === 0)) model.remove(name);
    model.check(names);
    // The table stays small: it grows with the names held, not with every put ever made.
    for (let round = 0; round < 20; round++) for (const name of names.slice(0, 500)) model.put(name);
    expect(model.slots.byteLength).toBeLessThanOrEqual(4 * 4 * 2048);
    model.check(names);
  });
});
