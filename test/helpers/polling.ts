export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `check` every `intervalMs` until it holds; resolves with the milliseconds it took, and fails
 * after `timeoutMs`. For what another replica or a background task makes true, never for ordering.
 */
export async function until(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 3_000,
  intervalMs = 2,
): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await check()) return performance.now() - start;
    if (performance.now() - start > timeoutMs) throw new Error(`not seen within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}
