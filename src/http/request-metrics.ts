/**
 * Per-request metrics that cost almost nothing to record. prom-client's Histogram and Counter hash
 * their label set on every observation, which is a real share of a cached read. These keep one
 * series object per label set (RequestMetrics keeps the series it found, so a request builds no key
 * at all), and are turned into prom-client's metric format only when /metrics is scraped. They
 * register in a prom-client Registry like any of its own metrics.
 */

type Labels = Record<string, string>;

interface MetricValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** The shape prom-client's Registry reads from a metric at scrape time. */
interface MetricSnapshot {
  name: string;
  help: string;
  type: 'histogram' | 'counter';
  aggregator: 'sum';
  values: MetricValue[];
}

/** Series per metric beyond which new label sets are folded into one `other` series. */
const MAX_SERIES = 2_000;

export interface HistogramSeries {
  readonly labels: Labels;
  /** Observations per bucket, not cumulative (cumulated at scrape time). */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

export class CheapHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, HistogramSeries>();
  /** Bumped by reset(): series handed out before belong to no metric any more. */
  generation = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly buckets: readonly number[],
  ) {}

  /**
   * The series for `key`, created with `labels()` the first time. The key must identify the label
   * values (callers join them); labels() is only called once per key.
   */
  seriesFor(key: string, labels: () => Labels): HistogramSeries {
    let series = this.series.get(key);
    if (series === undefined) {
      const overflow = this.series.size >= MAX_SERIES;
      const overflowKey = '\u0000other';
      series = overflow ? this.series.get(overflowKey) : undefined;
      if (series === undefined) {
        series = {
          labels: overflow ? Object.fromEntries(this.labelNames.map((name) => [name, 'other'])) : labels(),
          counts: new Float64Array(this.buckets.length),
          sum: 0,
          count: 0,
        };
        this.series.set(overflow ? overflowKey : key, series);
      }
    }
    return series;
  }

  observe(series: HistogramSeries, value: number): void {
    series.count++;
    series.sum += value;
    const { buckets } = this;
    for (let i = 0; i < buckets.length; i++) {
      if (value <= buckets[i]!) {
        series.counts[i]!++;
        return;
      }
    }
  }

  get(): MetricSnapshot {
    const values: MetricValue[] = [];
    for (const series of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += series.counts[i]!;
        values.push({
          labels: { ...series.labels, le: String(this.buckets[i]) },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      }
      values.push({
        labels: { ...series.labels, le: '+Inf' },
        value: series.count,
        metricName: `${this.name}_bucket`,
      });
      values.push({ labels: series.labels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: series.labels, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
    this.generation++;
  }
}

export interface CounterSeries {
  readonly labels: Labels;
  value: number;
}

export class CheapCounter {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, CounterSeries>();
  /** Bumped by reset() (see CheapHistogram). */
  generation = 0;

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** The series for `key` (see CheapHistogram.seriesFor). */
  seriesFor(key: string, labels: () => Labels): CounterSeries {
    let series = this.series.get(key);
    if (series === undefined) {
      if (this.series.size >= MAX_SERIES) return this.seriesFor('\u0000other', () => ({ other: 'true' }));
      series = { labels: labels(), value: 0 };
      this.series.set(key, series);
    }
    return series;
  }

  get(): MetricSnapshot {
    const values = [...this.series.values()].map((series) => ({
      labels: series.labels,
      value: series.value,
    }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
    this.generation++;
  }
}

/** What one (route, method, status) records into, found without building a key. */
interface RequestSeries {
  generation: number;
  duration: HistogramSeries;
  /** For a GET or HEAD with If-None-Match: its result label, when it gets one. */
  result: 'not_modified' | 'modified' | undefined;
  /** Created by the first such request, as seriesFor would. */
  conditional: CounterSeries | undefined;
}

/**
 * The two per-request metrics, shared by the Fastify hook and the response cache (which answers
 * before Fastify and records the same series).
 */
export class RequestMetrics {
  readonly durations = new CheapHistogram(
    'skillreg_http_request_duration_seconds',
    'HTTP request duration in seconds, by method, route pattern and status code',
    ['method', 'route', 'status_code'],
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  readonly conditional = new CheapCounter(
    'skillreg_conditional_requests_total',
    'GET/HEAD requests with If-None-Match, by route: not_modified (304) or modified (answered with a body)',
  );

  /**
   * route -> method -> status: the series of each combination seen. The route and method strings are
   * the same few string objects on every request, so these lookups cost less than building and hashing
   * a key string for every request.
   */
  private readonly byRoute = new Map<string, Map<string, Map<number, RequestSeries>>>();

  /** One answered request. `ifNoneMatch`: the request carried If-None-Match. */
  record(method: string, route: string, status: number, seconds: number, ifNoneMatch: boolean): void {
    const generation = this.durations.generation + this.conditional.generation;
    let series = this.byRoute.get(route)?.get(method)?.get(status);
    if (series === undefined || series.generation !== generation) {
      series = this.seriesOf(method, route, status, generation);
    }
    this.durations.observe(series.duration, seconds);
    if (ifNoneMatch && series.result !== undefined) {
      const result = series.result;
      series.conditional ??= this.conditional.seriesFor(`${result} ${route}`, () => ({ route, result }));
      series.conditional.value++;
    }
  }

  private seriesOf(method: string, route: string, status: number, generation: number): RequestSeries {
    const duration = this.durations.seriesFor(`${method} ${status} ${route}`, () => ({
      method,
      route,
      status_code: String(status),
    }));
    const result =
      method !== 'GET' && method !== 'HEAD'
        ? undefined
        : status === 304
          ? 'not_modified'
          : status >= 200 && status < 300
            ? 'modified'
            : undefined;
    const series: RequestSeries = { generation, duration, result, conditional: undefined };
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.byRoute.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    byStatus.set(status, series);
    return series;
  }
}
