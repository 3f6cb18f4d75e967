/**
 * The k best of many candidates in one pass, best first: a heap whose root is the worst one kept. A
 * number ranks the candidates first, `keys[candidate * stride + offset]`, higher better, and `better`
 * (which must agree with the keys) decides only between equal keys: ranking hundreds of thousands of
 * candidates, one below the worst kept costs a comparison of two numbers rather than a call. `admit`
 * (a filter that may cost more) is asked only of candidates that would be kept. `prepare`, when
 * given, is called with each candidate (and its position) just before its key is read: a caller that
 * computes the keys does it in the same pass over many candidates, not in one of its own before.
 */
export function bestByKey(
  candidates: ArrayLike<number>,
  k: number,
  keys: Float64Array | Float32Array,
  stride: number,
  offset: number,
  better: (a: number, b: number) => boolean,
  admit: (candidate: number) => boolean,
  prepare?: (candidate: number, at: number) => void,
): number[] {
  const heap: number[] = [];
  if (k <= 0) return heap;
  for (let at = 0; at < candidates.length; at++) {
    const candidate = candidates[at]!;
    prepare?.(candidate, at);
    if (heap.length === k) {
      const key = keys[candidate * stride + offset]!;
      const worst = keys[heap[0]! * stride + offset]!;
      if (key < worst || (key === worst && !better(candidate, heap[0]!))) continue;
    }
    if (admit(candidate)) keep(heap, k, candidate, better);
  }
  return sorted(heap, better);
}

/**
 * The k-th highest of `values` over the candidates `admit` lets through (-Infinity when fewer than k
 * are): a heap of numbers, so no call is made for a candidate below the k-th highest so far. The
 * candidates are given, or a count n for every number from 0 to n - 1.
 */
export function kthHighest(
  candidates: ArrayLike<number> | number,
  k: number,
  value: (candidate: number) => number,
  admit: (candidate: number) => boolean,
): number {
  if (k <= 0) return Number.POSITIVE_INFINITY;
  const heap = new Float64Array(k);
  let size = 0;
  const given = typeof candidates === 'number' ? undefined : candidates;
  const length = given === undefined ? (candidates as number) : given.length;
  for (let at = 0; at < length; at++) {
    const candidate = given === undefined ? at : given[at]!;
    const v = value(candidate);
    if (size === k && v <= heap[0]!) continue;
    if (!admit(candidate)) continue;
    if (size < k) {
      let child = size++;
      while (child > 0) {
        const parent = (child - 1) >> 1;
        if (heap[parent]! <= v) break;
        heap[child] = heap[parent]!;
        child = parent;
      }
      heap[child] = v;
    } else {
      let parent = 0;
      for (;;) {
        const left = parent * 2 + 1;
        if (left >= k) break;
        const right = left + 1;
        const lower = right < k && heap[right]! < heap[left]! ? right : left;
        if (heap[lower]! >= v) break;
        heap[parent] = heap[lower]!;
        parent = lower;
      }
      heap[parent] = v;
    }
  }
  return size < k ? Number.NEGATIVE_INFINITY : heap[0]!;
}

/** Adds `candidate` to a heap of at most k whose root is the worst kept (replacing the root when full). */
function keep(heap: number[], k: number, candidate: number, better: (a: number, b: number) => boolean): void {
  if (heap.length < k) {
    heap.push(candidate);
    let at = heap.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!better(heap[parent]!, heap[at]!)) break;
      [heap[parent], heap[at]] = [heap[at]!, heap[parent]!];
      at = parent;
    }
    return;
  }
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

function sorted(heap: number[], better: (a: number, b: number) => boolean): number[] {
  return heap.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
}
