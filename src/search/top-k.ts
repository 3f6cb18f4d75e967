/**
 * The k best of many candidates in one pass: a heap whose root is the worst one kept, so a candidate
 * that cannot beat it costs one comparison. `admit` (a filter that may cost more than a comparison)
 * is asked only of candidates that would be kept. Best first.
 */
export function bestOf(
  candidates: readonly number[],
  k: number,
  better: (a: number, b: number) => boolean,
  admit: (candidate: number) => boolean,
): number[] {
  const heap: number[] = [];
  if (k <= 0) return heap;
  for (const candidate of candidates) {
    if (heap.length === k && !better(candidate, heap[0]!)) continue;
    if (!admit(candidate)) continue;
    if (heap.length < k) {
      heap.push(candidate);
      let at = heap.length - 1;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (!better(heap[parent]!, heap[at]!)) break;
        [heap[parent], heap[at]] = [heap[at]!, heap[parent]!];
        at = parent;
      }
    } else {
      heap[0] = candidate;
      let at = 0;
      for (;;) {
        const left = at * 2 + 1;
        const right = left + 1;
        let worst = at;
        if (left < heap.length && better(heap[worst]!, heap[left]!)) worst = left;
        if (right < heap.length && better(heap[worst]!, heap[right]!)) worst = right;
        if (worst === at) break;
        [heap[worst], heap[at]] = [heap[at]!, heap[worst]!];
        at = worst;
      }
    }
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
}
