/** Shares strings between entries ("1.0.0" is one string, not one per skill); forgets past 4,096. */
export class Interner {
  private readonly strings = new Map<string, string>();

  get(value: string): string {
    const known = this.strings.get(value);
    if (known !== undefined) return known;
    if (this.strings.size >= 4096) this.strings.clear();
    this.strings.set(value, value);
    return value;
  }
}
