// src/store/price-store.ts
import { ClassicLevel } from "classic-level";

// src/errors.ts
var PriceStoreError = class extends Error {
  code;
  details;
  constructor(code, message, options = {}) {
    super(message, options.cause === void 0 ? void 0 : { cause: options.cause });
    this.code = code;
    this.details = Object.freeze({ ...options.details });
  }
  get name() {
    return "PriceStoreError";
  }
};
function isPriceStoreError(err, code) {
  if (typeof err !== "object" || err === null) return false;
  const actual = err.code;
  if (typeof actual !== "string" || !actual.startsWith("PRICE_")) return false;
  return code === void 0 || actual === code;
}
function describeValue(value) {
  let text;
  if (typeof value === "string") text = JSON.stringify(value);
  else if (value === void 0) text = "undefined";
  else if (typeof value === "bigint") text = `${value}n`;
  else if (typeof value === "number") text = Object.is(value, -0) ? "-0" : String(value);
  else if (typeof value === "function" || typeof value === "symbol") text = typeof value;
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

// src/engine/query-errors.ts
function fail(code, parameter, message) {
  return new PriceStoreError(code, message, { details: { parameter } });
}

// src/engine/abort.ts
function isAbortSignal(value) {
  if (typeof value !== "object" || value === null) return false;
  const signal = value;
  return typeof signal.aborted === "boolean" && typeof signal.addEventListener === "function" && typeof signal.removeEventListener === "function";
}
function checkSignal(value) {
  if (value === void 0 || isAbortSignal(value)) return value;
  throw fail("PRICE_INVALID_QUERY", "signal", `signal must be an AbortSignal (got ${describeValue(value)})`);
}
function abortError(signal) {
  const reason = signal.reason;
  const why = reason instanceof Error ? reason.message : reason === void 0 ? "" : describeValue(reason);
  return new PriceStoreError("PRICE_ABORTED", `the query was aborted by its signal${why === "" ? "" : ` (${why})`}`, {
    cause: reason,
    details: { parameter: "signal" }
  });
}
function throwIfAborted(signal) {
  if (signal?.aborted === true) throw abortError(signal);
}
async function* abortableBatches(batches, signal) {
  for await (const batch of batches) {
    throwIfAborted(signal);
    yield batch;
  }
}
function releaseOnAbort(items, signal) {
  const release = () => void items.return(void 0).catch(() => {
  });
  let listening = false;
  const stopListening = () => signal.removeEventListener("abort", release);
  return {
    async next() {
      if (signal.aborted) {
        stopListening();
        await items.return(void 0).catch(() => {
        });
        throw abortError(signal);
      }
      if (!listening) {
        listening = true;
        signal.addEventListener("abort", release, { once: true });
      }
      try {
        const step = await items.next();
        if (step.done === true) stopListening();
        return step;
      } catch (err) {
        stopListening();
        throw err;
      }
    },
    async return() {
      stopListening();
      return items.return(void 0);
    }
  };
}
function abortableSource(source, signal) {
  const { scanNow, bucketHeads } = source;
  return {
    scan: (symbol, options) => abortableBatches(source.scan(symbol, options), signal),
    symbols: async () => {
      const symbols = await source.symbols();
      throwIfAborted(signal);
      return symbols;
    },
    ...scanNow === void 0 ? {} : { scanNow: (symbol, options) => scanNow.call(source, symbol, options) },
    ...bucketHeads === void 0 ? {} : {
      bucketHeads: (symbol, range) => {
        const heads = bucketHeads.call(source, symbol, range);
        return heads === void 0 || Array.isArray(heads) ? heads : abortableBatches(heads, signal);
      }
    }
  };
}

// src/engine/plan.ts
var LIGHT_QUERY_RECORDS = 100;
var plans = /* @__PURE__ */ new WeakSet();
function planQuery(query, maxRangePoints) {
  const symbols = query.kind === "several" || query.kind === "twap" ? query.symbols : [query.symbol];
  const reads = Object.freeze(readsOf(query).map((read) => Object.freeze(read)));
  const perSymbol = reads.reduce((sum, read) => sum + (read.limit ?? Number.POSITIVE_INFINITY), 0);
  const records = symbols === "all" ? Number.POSITIVE_INFINITY : perSymbol * symbols.length;
  const plan = Object.freeze({ query, symbols, reads, records, heavy: records > LIGHT_QUERY_RECORDS, maxRangePoints });
  plans.add(plan);
  return plan;
}
function checkPlan(plan) {
  if (typeof plan !== "object" || plan === null || !plans.has(plan)) {
    throw new PriceStoreError("PRICE_INVALID_QUERY", "not a query plan: make one with store.plan(params)", { details: { parameter: "plan" } });
  }
}
function readsOf(query) {
  switch (query.kind) {
    case "latest":
    case "several": {
      const limit = query.kind === "latest" ? query.offset + query.limit : 1;
      if (query.asOf === void 0) return [{ role: "main", ...window(query.from, query.to), reverse: true, limit }];
      const to = query.to;
      const { direction, tolerance } = query.asOf;
      const reads = [];
      if (direction !== "after") {
        reads.push({ role: "main", ...window(tolerance === void 0 ? void 0 : Math.max(0, to - tolerance), to), reverse: true, limit: 1 });
      }
      if (direction !== "before") {
        reads.push({ role: "after", ...window(to, tolerance === void 0 ? void 0 : Math.min(Number.MAX_SAFE_INTEGER, to + tolerance)), reverse: false, limit: 1 });
      }
      return reads;
    }
    case "range":
    case "candles": {
      const main = { role: "main", from: query.from, to: query.to, reverse: false };
      return query.fill === void 0 ? [main] : [main, ...carryRead(query.from)];
    }
    case "twap":
      return [
        { role: "carry", to: query.from, reverse: true, limit: 1 },
        ...query.to > query.from ? [{ role: "main", from: query.from + 1, to: query.to, reverse: false }] : []
      ];
  }
}
function carryRead(from) {
  return from === 0 ? [] : [{ role: "carry", to: from - 1, reverse: true, limit: 1 }];
}
function window(from, to) {
  return { ...from === void 0 ? {} : { from }, ...to === void 0 ? {} : { to } };
}
function bucketOf(grid, timestamp) {
  return Math.floor((timestamp - grid.origin) / grid.interval);
}
function bucketStart(grid, index) {
  return grid.origin + index * grid.interval;
}
function bucketEnd(grid, index) {
  return Math.min(grid.to, bucketStart(grid, index + 1) - 1);
}

// src/engine/gap-fill.ts
var GapFiller = class {
  #grid;
  #maxAge;
  #emit;
  #lastBucket;
  #next;
  #held;
  #stopped = false;
  /**
   * @param carry the latest record before `grid.from`, if any
   * @param emit receives each span in order; returns false to stop
   */
  constructor(grid, fill, carry, emit) {
    this.#grid = grid;
    this.#maxAge = fill.maxAge;
    this.#emit = emit;
    this.#next = bucketOf(grid, grid.from);
    this.#lastBucket = bucketOf(grid, grid.to);
    this.#held = carry;
  }
  /** Takes a bucket's own item and closing row; buckets come in ascending order. False once stopped. */
  push(bucket, close, item) {
    if (this.#stopped) return false;
    if (bucket > this.#next && !this.#carry(bucket - 1)) return false;
    this.#held = close;
    this.#next = bucket + 1;
    return this.#send({ first: bucket, last: bucket, row: close, carried: false, item });
  }
  /** Fills the buckets after the last pushed one, up to the range's end. */
  finish() {
    if (!this.#stopped) this.#carry(this.#lastBucket);
  }
  /** Emits the buckets `next..last` carrying the held record, as far as `maxAge` allows. */
  #carry(last) {
    const held = this.#held;
    if (held === void 0 || last < this.#next) return true;
    const end = Math.min(last, this.#lastCarried(held.timestamp));
    if (end < this.#next) return true;
    return this.#send({ first: this.#next, last: end, row: held, carried: true, item: void 0 });
  }
  /** The last bucket whose end is at most `maxAge` after `timestamp`; ages only grow from bucket to bucket. */
  #lastCarried(timestamp) {
    const maxAge = this.#maxAge;
    if (maxAge === void 0) return this.#lastBucket;
    const last = bucketOf(this.#grid, timestamp + maxAge + 1) - 1;
    if (last >= this.#lastBucket - 1 && this.#grid.to - timestamp <= maxAge) return this.#lastBucket;
    return Math.min(last, this.#lastBucket - 1);
  }
  #send(span2) {
    if (!this.#emit(span2)) this.#stopped = true;
    return !this.#stopped;
  }
};
function bucketAge(grid, index, timestamp) {
  return { bucket: bucketStart(grid, index), age: bucketEnd(grid, index) - timestamp };
}

// src/engine/candles.ts
function refOf(row) {
  if (row.ref !== void 0) return row.ref();
  const { id, timestamp, value } = row.record();
  return { id, timestamp, value };
}
var CandleBuilder = class {
  #grid;
  #emit;
  #current;
  #stopped = false;
  constructor(grid, emit) {
    this.#grid = grid;
    this.#emit = emit;
  }
  /** Takes the next row; false once stopped. */
  push(row) {
    if (this.#stopped) return false;
    const bucket = bucketOf(this.#grid, row.timestamp);
    const current = this.#current;
    const ref = refOf(row);
    if (current !== void 0 && current.bucket === bucket) {
      if (ref.value >= current.high.value) current.high = ref;
      if (ref.value <= current.low.value) current.low = ref;
      current.close = ref;
      current.closeRow = row;
      current.count++;
      return true;
    }
    if (current !== void 0 && !this.#send(current)) return false;
    this.#current = { bucket, open: ref, high: ref, low: ref, close: ref, closeRow: row, count: 1 };
    return true;
  }
  /** Emits the last bucket's candle, unless stopped. */
  flush() {
    if (!this.#stopped && this.#current !== void 0) this.#send(this.#current);
    this.#current = void 0;
  }
  #send(open) {
    const { bucket, open: first, high, low, close, count } = open;
    const candle = { bucket: bucketStart(this.#grid, bucket), open: first, high, low, close, count };
    if (!this.#emit(bucket, candle, open.closeRow)) this.#stopped = true;
    return !this.#stopped;
  }
};
function carriedCandle(grid, index, row) {
  const ref = refOf(row);
  const { bucket, age } = bucketAge(grid, index, ref.timestamp);
  return { bucket, open: ref, high: ref, low: ref, close: ref, count: 0, carried: true, age };
}

// src/engine/deferred-answer.ts
var DeferredAnswer = class {
  #rows;
  #build;
  #withMinutes;
  /**
   * @param build turns a chosen row into its answer item (may throw `PRICE_CORRUPT_VALUE`)
   * @param withMinutes whether the items are the range form's (with `minutes`), for rows that write their own JSON
   */
  constructor(rows, build, withMinutes2) {
    this.#rows = rows;
    this.#build = build;
    this.#withMinutes = withMinutes2;
  }
  /** How many records the answer holds. */
  get length() {
    return this.#rows.length;
  }
  /**
   * The record at `index`, decoded now (rows decode once and keep the result).
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` when its stored value does not decode
   */
  item(index) {
    return this.#build(this.#rows[index]);
  }
  /**
   * The JSON text of the record at `index` when its row can write it
   * without decoding (see `ScanRow.json`); otherwise `undefined`.
   */
  json(index) {
    return this.#rows[index].json?.(this.#withMinutes);
  }
  /** Every record, decoded: the answer `executePlan` gives. */
  toArray() {
    return this.#rows.map(this.#build);
  }
};

// src/engine/compare-ids.ts
function compareIds(a, b) {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}
function codePointRank(unit) {
  if (unit >= 55296 && unit <= 57343) return unit + 8192;
  if (unit >= 57344) return unit - 2048;
  return unit;
}

// src/engine/sample.ts
function minuteOfHour(timestamp) {
  return Math.floor(timestamp / 6e4) % 60;
}
function withMinutes(record) {
  return Object.freeze({ ...record, minutes: minuteOfHour(record.timestamp) });
}
var BucketSampler = class {
  #grid;
  #emit;
  #pending;
  #pendingBucket = 0;
  #stopped = false;
  /** @param grid the buckets: `interval` ms wide, starting at `origin` (0: the epoch) */
  constructor(grid, emit) {
    this.#grid = grid;
    this.#emit = emit;
  }
  /** Takes the next row; false once sampling has stopped. */
  push(row) {
    const bucket = bucketOf(this.#grid, row.timestamp);
    if (this.#pending !== void 0 && bucket !== this.#pendingBucket && !this.#emit(this.#pending)) {
      this.#stopped = true;
      return false;
    }
    this.#pending = row;
    this.#pendingBucket = bucket;
    return true;
  }
  /** Emits the last bucket's row, unless sampling stopped early. */
  flush() {
    if (!this.#stopped && this.#pending !== void 0) this.#emit(this.#pending);
    this.#pending = void 0;
  }
};

// src/engine/twap.ts
var TwapBuilder = class {
  #from;
  #to;
  #first;
  #held;
  #start = 0;
  #sum = 0;
  #compensation = 0;
  #count = 0;
  constructor(from, to) {
    this.#from = from;
    this.#to = to;
  }
  push(row) {
    const ref = refOf(row);
    if (this.#held === void 0) {
      this.#first = ref;
      this.#start = Math.max(ref.timestamp, this.#from);
    } else {
      this.#weigh(this.#held, ref.timestamp);
      if (ref.timestamp === this.#first?.timestamp) this.#first = ref;
    }
    this.#held = ref;
  }
  /** The average, or `undefined` when no record is in force anywhere in the window. */
  finish() {
    const held = this.#held;
    const first = this.#first;
    if (held === void 0 || first === void 0) return void 0;
    this.#weigh(held, this.#to);
    const span2 = this.#to - this.#start;
    const [twap, count] = span2 === 0 ? [held.value, 1] : [this.#sum + this.#compensation, this.#count];
    return { twap, from: this.#from, to: this.#to, start: this.#start, count, first, last: held };
  }
  /** Adds `record`'s value weighted by the time from its start to `until`. */
  #weigh(record, until) {
    const weight = until - Math.max(record.timestamp, this.#from);
    if (weight <= 0) return;
    this.#count++;
    const term = record.value * (weight / (this.#to - this.#start));
    const sum = this.#sum + term;
    this.#compensation += Math.abs(this.#sum) >= Math.abs(term) ? this.#sum - sum + term : term - sum + this.#sum;
    this.#sum = sum;
  }
};

// src/engine/execute.ts
var SEVERAL_CONCURRENCY = 64;
async function executePlan(plan, source, options = {}) {
  const answer = await executePlanDeferred(plan, source, options);
  return answer instanceof DeferredAnswer ? answer.toArray() : answer;
}
function executePlanDeferred(plan, source, options = {}) {
  const { signal } = options;
  if (signal === void 0) return answerPlan(plan, source);
  try {
    throwIfAborted(signal);
  } catch (err) {
    return Promise.reject(err);
  }
  return answerPlan(plan, abortableSource(source, signal));
}
function answerPlan(plan, source) {
  const { query } = plan;
  switch (query.kind) {
    case "latest":
      return query.asOf === void 0 ? latestRecords(query, plan, source) : asOfRecord(query, plan, source);
    case "several":
      return severalLatest(query, plan, source);
    case "range":
      return query.fill === void 0 ? rangeRecords(query, plan, source) : filledRange(query, plan, source);
    case "candles":
      return candles(query, plan, source);
    case "twap":
      return twaps(query, plan, source);
  }
}
async function latestRecords(query, plan, source) {
  const rows = [];
  let toSkip = query.offset;
  await forEachRow(rowsOf(source, query.symbol, readOf(plan, "main")), (row) => {
    if (toSkip > 0) toSkip--;
    else rows.push(row);
    return rows.length < query.limit;
  });
  return new DeferredAnswer(rows, recordOf, false);
}
async function asOfRecord(query, plan, source) {
  const now = lookupNow(source, query.symbol, plan);
  const row = now === NOT_NOW ? await lookup(source, query.symbol, plan) : now;
  return row === void 0 ? [] : [row.record()];
}
async function severalLatest(query, plan, source) {
  const symbols = query.symbols === "all" ? await source.symbols() : query.symbols;
  const found = new Array(symbols.length);
  const waiting = [];
  symbols.forEach((symbol, i) => {
    const row = lookupNow(source, symbol, plan);
    if (row === NOT_NOW) waiting.push(i);
    else found[i] = row;
  });
  await inBatches(waiting, async (i) => {
    found[i] = await lookup(source, symbols[i], plan);
  });
  const entries = [];
  symbols.forEach((symbol, i) => {
    const row = found[i];
    if (row !== void 0) entries.push([symbol, row.record()]);
  });
  return Object.fromEntries(entries);
}
async function rangeRecords(query, plan, source) {
  const page = new Page(query, plan.maxRangePoints);
  const sampler = new BucketSampler(query, (row) => page.add(row));
  await forEachRow(rowsToSample(source, query.symbol, query), (row) => sampler.push(row));
  sampler.flush();
  return new DeferredAnswer(page.finish(), sampledRecord, true);
}
async function filledRange(query, plan, source) {
  const page = new Page(query, plan.maxRangePoints);
  const filler = new GapFiller(query, query.fill, await carryRow(source, query.symbol, plan), (span2) => page.addSpan(span2));
  const sampler = new BucketSampler(query, (row) => filler.push(bucketIndex(query, row), row, row));
  await forEachRow(rowsToSample(source, query.symbol, query), (row) => sampler.push(row));
  sampler.flush();
  filler.finish();
  return page.finishSpans().flatMap(([span2, first, last]) => pointsOf(query, span2, first, last));
}
async function candles(query, plan, source) {
  const page = new Page(query, plan.maxRangePoints);
  const fill = query.fill;
  const filler = fill === void 0 ? void 0 : new GapFiller(query, fill, await carryRow(source, query.symbol, plan), (span2) => page.addSpan(span2));
  const builder = new CandleBuilder(query, (bucket, candle, close) => filler === void 0 ? page.addSpan({ first: bucket, last: bucket, row: close, carried: false, item: candle }) : filler.push(bucket, close, candle));
  await forEachRow(rowsOf(source, query.symbol, readOf(plan, "main")), (row) => builder.push(row));
  builder.flush();
  filler?.finish();
  return page.finishSpans().flatMap(([span2, first, last]) => candlesOf(query, span2, first, last));
}
async function twaps(query, plan, source) {
  const symbols = query.symbols === "all" ? await source.symbols() : query.symbols;
  const found = new Array(symbols.length);
  await inBatches(symbols.map((_, i) => i), async (i) => {
    const symbol = symbols[i];
    const builder = new TwapBuilder(query.from, query.to);
    for (const read of plan.reads) await forEachRow(rowsOf(source, symbol, read), (row) => (builder.push(row), true));
    found[i] = builder.finish();
  });
  const entries = [];
  symbols.forEach((symbol, i) => {
    const twap = found[i];
    if (twap !== void 0) entries.push([symbol, twap]);
  });
  return Object.fromEntries(entries);
}
async function* streamBuckets(plan, rawSource, options = {}) {
  const { signal } = options;
  throwIfAborted(signal);
  const source = signal === void 0 ? rawSource : abortableSource(rawSource, signal);
  const query = plan.query;
  const carry = query.fill === void 0 ? void 0 : await carryRow(source, query.symbol, plan);
  let ready = [];
  const take = (span2) => ready.push(span2) > 0;
  const filler = query.fill === void 0 ? void 0 : new GapFiller(query, query.fill, carry, take);
  const emit = (bucket, item, close) => filler === void 0 ? take({ first: bucket, last: bucket, row: close, carried: false, item }) : filler.push(bucket, close, item);
  const feed = query.kind === "candles" ? new CandleBuilder(query, (bucket, candle, close) => emit(bucket, candle, close)) : new BucketSampler(query, (row) => emit(bucketIndex(query, row), row, row));
  const rows = query.kind === "candles" ? rowsOf(source, query.symbol, readOf(plan, "main")) : rowsToSample(source, query.symbol, query);
  for await (const batch of Array.isArray(rows) ? [rows] : rows) {
    for (const row of batch) feed.push(row);
    const out = ready;
    ready = [];
    for (const span2 of out) yield* itemsOf(query, span2, signal);
  }
  feed.flush();
  filler?.finish();
  for (const span2 of ready) yield* itemsOf(query, span2, signal);
}
function* itemsOf(query, span2, signal) {
  throwIfAborted(signal);
  if (query.kind === "range" && query.fill === void 0) {
    yield sampledRecord(span2.row);
    return;
  }
  for (let index = span2.first; index <= span2.last; index++) {
    if (index > span2.first) throwIfAborted(signal);
    if (query.kind === "candles") yield span2.item ?? carriedCandle(query, index, span2.row);
    else yield pointOf(query, span2, index);
  }
}
var Page = class {
  #offset;
  #end;
  #cap;
  #kept = [];
  #position = 0;
  constructor(query, cap) {
    this.#offset = query.offset;
    this.#end = query.limit === void 0 ? Number.POSITIVE_INFINITY : query.offset + query.limit;
    this.#cap = cap;
  }
  /** Takes one bucket's item; false once the page is full. */
  add(item) {
    return this.#take(item, 1);
  }
  /** Takes a span of `last - first + 1` buckets; false once the page is full. */
  addSpan(span2) {
    return this.#take(span2, span2.last - span2.first + 1);
  }
  /** The kept items. */
  finish() {
    this.#check();
    return this.#kept.map(([item]) => item);
  }
  /** The kept spans, each with the first and last of its buckets inside the page. */
  finishSpans() {
    this.#check();
    return this.#kept;
  }
  /** Keeps the part of `size` buckets inside `offset..end`; the spans' own bucket numbers are offset by `skip`. */
  #take(item, size) {
    const start = this.#position;
    this.#position += size;
    const from = Math.max(start, this.#offset);
    const until = Math.min(this.#position, this.#end);
    if (from < until && this.#kept.length <= this.#cap) {
      const first = item.first ?? 0;
      this.#kept.push([item, first + (from - start), first + (until - 1 - start)]);
    }
    return this.#position < this.#end;
  }
  /** Refuses an answer over the cap, with the size it would have had. */
  #check() {
    const count = Math.max(0, Math.min(this.#position, this.#end) - this.#offset);
    if (count > this.#cap) {
      throw new PriceStoreError(
        "PRICE_RANGE_TOO_LARGE",
        `the answer would hold ${count} records, more than the cap of ${this.#cap} (maxRangePoints); use a larger interval, a narrower time range, or a limit`,
        { details: { parameter: "interval", count, cap: this.#cap } }
      );
    }
  }
};
function pointsOf(grid, span2, first, last) {
  const points = [];
  for (let index = first; index <= last; index++) points.push(pointOf(grid, span2, index));
  return points;
}
function pointOf(grid, span2, index) {
  const record = sampledRecord(span2.row);
  const { bucket, age } = bucketAge(grid, index, record.timestamp);
  return { bucket, carried: span2.carried, age, record };
}
function candlesOf(grid, span2, first, last) {
  if (span2.item !== void 0) return [span2.item];
  const out = [];
  for (let index = first; index <= last; index++) out.push(carriedCandle(grid, index, span2.row));
  return out;
}
function recordOf(row) {
  return row.record();
}
function sampledRecord(row) {
  return row.sampled?.() ?? withMinutes(row.record());
}
function bucketIndex(grid, row) {
  return Math.floor((row.timestamp - grid.origin) / grid.interval);
}
function readOf(plan, role) {
  return plan.reads.find((read) => read.role === role);
}
async function carryRow(source, symbol, plan) {
  const read = plan.reads.find((candidate) => candidate.role === "carry");
  return read === void 0 ? void 0 : firstRow(source, symbol, read);
}
function rowsOf(source, symbol, options) {
  return source.scanNow?.(symbol, options) ?? source.scan(symbol, options);
}
function rowsToSample(source, symbol, range) {
  const { from, to, interval, origin } = range;
  return source.bucketHeads?.(symbol, { from, to, interval, origin }) ?? rowsOf(source, symbol, { from, to, reverse: false });
}
var NOT_NOW = /* @__PURE__ */ Symbol("not now");
function lookupNow(source, symbol, plan) {
  let before;
  let after;
  for (const read of plan.reads) {
    const rows = source.scanNow?.(symbol, read);
    if (rows === void 0) return NOT_NOW;
    if (read.role === "after") after = rows[0];
    else before = rows[0];
  }
  return nearer(plan.query, before, after);
}
async function lookup(source, symbol, plan) {
  let before;
  let after;
  for (const read of plan.reads) {
    const row = await firstRow(source, symbol, read);
    if (read.role === "after") after = row;
    else before = row;
  }
  return nearer(plan.query, before, after);
}
function nearer(query, before, after) {
  if (before === void 0 || after === void 0) return before ?? after;
  const to = query.to;
  return to - before.timestamp <= after.timestamp - to ? before : after;
}
async function firstRow(source, symbol, read) {
  let found;
  await forEachRow(rowsOf(source, symbol, { ...read, limit: 1 }), (row) => {
    found = row;
    return false;
  });
  return found;
}
async function inBatches(indexes, task) {
  for (let start = 0; start < indexes.length; start += SEVERAL_CONCURRENCY) {
    await Promise.all(indexes.slice(start, start + SEVERAL_CONCURRENCY).map(task));
  }
}
function forEachRow(rows, take) {
  if (!Array.isArray(rows)) return forEachBatchedRow(rows, take);
  for (const row of rows) if (!take(row)) break;
  return void 0;
}
async function forEachBatchedRow(batches, take) {
  for await (const batch of batches) {
    for (const row of batch) if (!take(row)) return;
  }
}

// src/engine/cost.ts
var READ_COST = 1 / 8;
var HEAD_MS = 6e5;
function costOf(plan, counts) {
  const { query } = plan;
  switch (query.kind) {
    case "latest":
      return plan.records;
    case "several":
      return (query.symbols === "all" ? counts.symbols.length : query.symbols.length) * plan.reads.length;
    case "range":
    case "candles": {
      const records = counts.records(query.symbol, query.from, query.to);
      const buckets = bucketOf(query, query.to) - bucketOf(query, query.from) + 1;
      const chosen = query.fill === void 0 ? Math.min(buckets, records) : buckets;
      if (query.kind === "range" && query.fill === void 0) refuseSurelyTooLarge(plan, counts, chosen);
      const onHeads = query.kind === "range" && query.interval % HEAD_MS === 0 && query.origin % HEAD_MS === 0;
      const read = onHeads ? Math.min(records, Math.ceil((query.to - query.from + 1) / HEAD_MS) + 1) : records;
      return pageOf(chosen, query.offset, query.limit) + read * READ_COST;
    }
    case "twap": {
      const symbols = query.symbols === "all" ? counts.symbols : query.symbols;
      let read = 0;
      for (const symbol of symbols) read += counts.records(symbol, query.from, query.to) + 1;
      return symbols.length + read * READ_COST;
    }
  }
}
function pageOf(total, offset, limit) {
  return Math.max(0, Math.min(total - offset, limit ?? Number.POSITIVE_INFINITY));
}
function refuseSurelyTooLarge(plan, counts, atMost) {
  const query = plan.query;
  const cap = plan.maxRangePoints;
  if (pageOf(atMost, query.offset, query.limit) <= cap || counts.bucketsSurelyHeld === void 0) return;
  const held = counts.bucketsSurelyHeld(query.symbol, query);
  if (held === void 0) return;
  const count = pageOf(held, query.offset, query.limit);
  if (count <= cap) return;
  throw new PriceStoreError(
    "PRICE_RANGE_TOO_LARGE",
    `the answer would hold at least ${count} records, more than the cap of ${cap} (maxRangePoints); use a larger interval, a narrower time range, or a limit`,
    { details: { parameter: "interval", count, cap } }
  );
}

// src/engine/form-rules.ts
var DIRECTIONS = ["before", "after", "nearest"];
function toAsOf(direction, tolerance, context, names) {
  if (direction === void 0 && tolerance === void 0) return void 0;
  const given = direction === void 0 ? "tolerance" : "direction";
  if (context.to === void 0) {
    throw fail("PRICE_INVALID_QUERY", given, `${given} needs ${names.to}, the as-of time it looks around`);
  }
  if (context.from !== void 0) {
    throw fail("PRICE_INVALID_QUERY", given, `${given} looks up one record around ${names.to}; leave out ${names.from} (got ${names.from}=${context.from})`);
  }
  if (context.limit !== void 0 && context.limit !== 1 || context.offset !== 0) {
    throw fail("PRICE_INVALID_QUERY", given, `${given} looks up one record: leave out limit and offset (got limit=${describeValue(context.limit)}, offset=${context.offset})`);
  }
  if ((direction ?? "before") === "before" && tolerance === void 0) return void 0;
  return Object.freeze({ direction: direction ?? "before", ...tolerance === void 0 ? {} : { tolerance } });
}
function toGrid(from, to, interval, origin) {
  const rest = (origin ?? 0) % interval;
  return { from, to, interval, origin: rest < 0 ? rest + interval : rest === 0 ? 0 : rest };
}
function toFill(fill, maxAge) {
  if (fill === void 0) {
    if (maxAge !== void 0) throw fail("PRICE_INVALID_QUERY", "maxAge", `maxAge bounds gap filling: give it with fill=prev (got maxAge=${maxAge} without fill)`);
    return void 0;
  }
  return Object.freeze({ mode: fill, ...maxAge === void 0 ? {} : { maxAge } });
}
function checkChoice(parameter, value, choices, code) {
  if (typeof value !== "string" || !choices.includes(value)) {
    throw fail(code, parameter, `${parameter} must be ${choices.map((choice) => JSON.stringify(choice)).join(" or ")} (got ${describeValue(value)})`);
  }
  return value;
}

// src/engine/text-rules.ts
var CONTROL = /\p{Cc}/u;
var SYMBOL_FORBIDDEN = /[\s,\p{Cc}]/u;
function symbolProblem(value) {
  return textProblem(value, 64) ?? (SYMBOL_FORBIDDEN.test(value) ? "must not contain whitespace, commas or control characters" : void 0);
}
function idProblem(value) {
  return textProblem(value, 128) ?? (CONTROL.test(value) ? "must not contain control characters" : void 0);
}
function textProblem(value, maxLength) {
  if (typeof value !== "string") return "must be a string";
  if (value.length === 0) return "must not be empty";
  if (!value.isWellFormed()) return "must be well-formed Unicode (no lone surrogates)";
  if (value.length > maxLength && countCodePoints(value) > maxLength) {
    return `must be at most ${maxLength} characters`;
  }
  return void 0;
}
function countCodePoints(value) {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

// src/engine/parse-query.ts
var KNOWN_PARAMETERS = [
  "symbol",
  "symbols",
  "provider",
  "limit",
  "offset",
  "fromTimestamp",
  "toTimestamp",
  "interval",
  "aggregate",
  "fill",
  "maxAge",
  "origin",
  "direction",
  "tolerance"
];
var PLAIN_INTEGER = /^[0-9]+$/;
var SIGNED_INTEGER = /^-?[0-9]+$/;
var NAMES = { from: "fromTimestamp", to: "toTimestamp" };
function parseQuery(params, config) {
  const raw = readKnownParameters(params);
  if ("symbol" in raw) checkSymbol("symbol", raw.symbol);
  const symbols = "symbols" in raw ? parseSymbolList(raw.symbols, config.limits.maxSymbols) : void 0;
  if ("provider" in raw) checkProvider(raw.provider, config.provider);
  const limit = "limit" in raw ? parseInteger("limit", raw.limit, "PRICE_INVALID_QUERY") : void 0;
  if (limit !== void 0) checkLimit(limit, config.limits.maxLimit);
  const offset = "offset" in raw ? parseInteger("offset", raw.offset, "PRICE_INVALID_QUERY") : 0;
  const from = "fromTimestamp" in raw ? parseInteger("fromTimestamp", raw.fromTimestamp, "PRICE_INVALID_RANGE") : void 0;
  const to = "toTimestamp" in raw ? parseInteger("toTimestamp", raw.toTimestamp, "PRICE_INVALID_RANGE") : void 0;
  const interval = "interval" in raw ? parseInteger("interval", raw.interval, "PRICE_INVALID_INTERVAL") : void 0;
  if (interval === 0) {
    throw fail("PRICE_INVALID_INTERVAL", "interval", `interval must be at least 1 (got ${describeValue(raw.interval)})`);
  }
  const aggregate = "aggregate" in raw ? checkChoice("aggregate", raw.aggregate, AGGREGATES, "PRICE_INVALID_QUERY") : void 0;
  const fill = "fill" in raw ? checkChoice("fill", raw.fill, FILLS, "PRICE_INVALID_QUERY") : void 0;
  const maxAge = "maxAge" in raw ? parseInteger("maxAge", raw.maxAge, "PRICE_INVALID_QUERY") : void 0;
  const origin = "origin" in raw ? parseInteger("origin", raw.origin, "PRICE_INVALID_INTERVAL", SIGNED_INTEGER) : void 0;
  const direction = "direction" in raw ? checkChoice("direction", raw.direction, DIRECTIONS, "PRICE_INVALID_QUERY") : void 0;
  const tolerance = "tolerance" in raw ? parseInteger("tolerance", raw.tolerance, "PRICE_INVALID_QUERY") : void 0;
  if ("symbol" in raw && symbols !== void 0) {
    throw fail("PRICE_INVALID_QUERY", "symbols", `give either symbol or symbols, not both (got symbol=${describeValue(raw.symbol)} and symbols=${describeValue(raw.symbols)})`);
  }
  if (aggregate === "twap") {
    if (interval !== void 0) throw fail("PRICE_INVALID_INTERVAL", "interval", `aggregate=twap averages the whole window: leave out interval (got interval=${interval})`);
    if (from === void 0 || to === void 0) throw missingWindow("aggregate=twap", "aggregate=twap", from);
  }
  if (aggregate === "candles" && !("symbol" in raw)) {
    throw fail("PRICE_INVALID_QUERY", "aggregate", "aggregate=candles needs a symbol: candles answer one symbol");
  }
  if (aggregate === "candles" && interval === void 0) {
    throw fail("PRICE_INVALID_INTERVAL", "interval", "aggregate=candles needs interval, the width of each candle in ms");
  }
  if (interval !== void 0 && !("symbol" in raw)) {
    throw fail("PRICE_INVALID_INTERVAL", "interval", `interval needs a symbol: the range form answers one symbol (got interval=${describeValue(raw.interval)} without symbol)`);
  }
  if (interval !== void 0 && (from === void 0 || to === void 0)) throw missingWindow("interval", `interval=${describeValue(raw.interval)}`, from);
  if (fill !== void 0 && interval === void 0) {
    throw fail("PRICE_INVALID_QUERY", "fill", `fill=${fill} fills the buckets of a range: give it with interval (got fill without interval)`);
  }
  if (origin !== void 0 && interval === void 0) {
    throw fail("PRICE_INVALID_INTERVAL", "origin", `origin shifts the buckets of a range: give it with interval (got origin=${origin} without interval)`);
  }
  if ((direction !== void 0 || tolerance !== void 0) && (interval !== void 0 || aggregate !== void 0)) {
    const given = direction === void 0 ? "tolerance" : "direction";
    throw fail("PRICE_INVALID_QUERY", given, `${given} applies to the as-of lookups, not to ${aggregate === void 0 ? "the range form" : `aggregate=${aggregate}`}`);
  }
  const fillMode = toFill(fill, maxAge);
  checkOrder(from, to);
  const window2 = { ...from === void 0 ? {} : { from }, ...to === void 0 ? {} : { to } };
  if (aggregate === "twap") {
    const list = "symbol" in raw ? Object.freeze([raw.symbol]) : symbols ?? "all";
    return Object.freeze({ kind: "twap", symbols: list, from, to });
  }
  const asOf = toAsOf(direction, tolerance, { from, to, limit, offset }, NAMES);
  if (!("symbol" in raw)) {
    return Object.freeze({ kind: "several", symbols: symbols ?? "all", ...window2, ...asOf === void 0 ? {} : { asOf } });
  }
  if (interval !== void 0) {
    return Object.freeze({
      kind: aggregate === "candles" ? "candles" : "range",
      symbol: raw.symbol,
      ...toGrid(from, to, interval, origin),
      offset,
      ...limit === void 0 ? {} : { limit },
      ...fillMode === void 0 ? {} : { fill: fillMode }
    });
  }
  return Object.freeze({ kind: "latest", symbol: raw.symbol, limit: limit ?? 1, offset, ...window2, ...asOf === void 0 ? {} : { asOf } });
}
var AGGREGATES = ["candles", "twap"];
var FILLS = ["prev"];
function missingWindow(form, given, from) {
  const missing2 = from === void 0 ? "fromTimestamp" : "toTimestamp";
  return fail("PRICE_INVALID_RANGE", missing2, `${form} needs both fromTimestamp and toTimestamp (got ${given} without ${missing2})`);
}
function checkSymbol(parameter, value) {
  const problem = symbolProblem(value);
  if (problem !== void 0) {
    throw fail("PRICE_INVALID_SYMBOL", parameter, `${parameter} ${problem} (got ${describeValue(value)})`);
  }
}
function checkLimit(limit, maxLimit) {
  if (limit < 1 || limit > maxLimit) {
    throw fail("PRICE_INVALID_QUERY", "limit", `limit must be between 1 and ${maxLimit} (got ${limit})`);
  }
}
function checkOrder(from, to) {
  if (from !== void 0 && to !== void 0 && from > to) {
    throw fail("PRICE_INVALID_RANGE", "fromTimestamp", `fromTimestamp must not be after toTimestamp (got ${from} > ${to})`);
  }
}
function readKnownParameters(params) {
  const raw = /* @__PURE__ */ Object.create(null);
  for (const name of KNOWN_PARAMETERS) {
    const values = valuesOf(params, name);
    if (values.length > 1) {
      throw fail("PRICE_INVALID_QUERY", name, `parameter ${name} must be given at most once (got ${values.map(describeValue).join(", ")})`);
    }
    if (values.length === 1) raw[name] = values[0];
  }
  return raw;
}
function valuesOf(params, name) {
  if (params instanceof URLSearchParams) return params.getAll(name);
  if (!Object.prototype.hasOwnProperty.call(params, name)) return [];
  const value = params[name];
  if (value === void 0) return [];
  return Array.isArray(value) ? value : [value];
}
function parseSymbolList(value, maxSymbols) {
  checkString("symbols", value, "PRICE_INVALID_SYMBOL");
  const distinct = /* @__PURE__ */ new Set();
  for (const entry of value.split(",")) {
    const problem = symbolProblem(entry);
    if (problem !== void 0) {
      throw fail("PRICE_INVALID_SYMBOL", "symbols", `each symbols entry ${problem} (got ${describeValue(entry)} in ${describeValue(value)})`);
    }
    distinct.add(entry);
  }
  if (distinct.size > maxSymbols) {
    throw fail("PRICE_INVALID_QUERY", "symbols", `symbols may name at most ${maxSymbols} distinct symbols (got ${distinct.size})`);
  }
  return Object.freeze([...distinct]);
}
function checkProvider(value, provider) {
  checkString("provider", value, "PRICE_INVALID_QUERY");
  if (value === "") throw fail("PRICE_INVALID_QUERY", "provider", 'provider must not be empty (got "")');
  if (value !== provider.name && value !== provider.id && provider.aliases?.includes(value) !== true) {
    const aliases = provider.aliases === void 0 || provider.aliases.length === 0 ? "" : `, also named ${provider.aliases.map((alias) => JSON.stringify(alias)).join(", ")}`;
    throw fail(
      "PRICE_UNSUPPORTED_PROVIDER",
      "provider",
      `unsupported provider ${describeValue(value)}: this store serves ${JSON.stringify(provider.name)} (${provider.id})${aliases}`
    );
  }
}
function parseInteger(parameter, value, code, pattern = PLAIN_INTEGER) {
  checkString(parameter, value, code);
  if (!pattern.test(value)) {
    const kind = pattern === PLAIN_INTEGER ? "a plain decimal integer" : "a decimal integer, optionally negative";
    throw fail(code, parameter, `${parameter} must be ${kind} (got ${describeValue(value)})`);
  }
  const digits = value.replace(/^(-?)0+(?=.)/, "$1");
  const number = Number(digits);
  if (digits.replace("-", "").length > 16 || !Number.isSafeInteger(number)) {
    throw fail(code, parameter, `${parameter} must be at most ${Number.MAX_SAFE_INTEGER} in size (got ${describeValue(value)})`);
  }
  return number === 0 ? 0 : number;
}
function checkString(parameter, value, code) {
  if (typeof value !== "string") {
    throw fail(code, parameter, `${parameter} must be a string (got ${describeValue(value)})`);
  }
}

// src/engine/answer-form.ts
function formOf(query) {
  return query.kind === "range" && query.fill !== void 0 ? "filled" : query.kind;
}
function typedAnswer(query, answer) {
  return Object.freeze({ form: formOf(query), query, answer });
}

// src/engine/typed-queries.ts
var NAMES2 = { from: "from", to: "to" };
function toLatestQuery(symbol, rawOptions, limits) {
  checkSymbol("symbol", symbol);
  const options = optionsObject(rawOptions);
  const limit = optionalInteger("limit", options.limit, "PRICE_INVALID_QUERY") ?? 1;
  checkLimit(limit, limits.maxLimit);
  const offset = optionalInteger("offset", options.offset, "PRICE_INVALID_QUERY") ?? 0;
  const window2 = toWindow(options);
  const asOf = typedAsOf(options, window2, optionalInteger("limit", options.limit, "PRICE_INVALID_QUERY"), offset);
  return Object.freeze({ kind: "latest", symbol, limit, offset, ...window2, ...asOf === void 0 ? {} : { asOf } });
}
function toSeveralQuery(symbols, rawOptions, limits) {
  const options = optionsObject(rawOptions);
  const list = symbols === void 0 ? "all" : symbolList(symbols, limits);
  const window2 = toWindow(options);
  const asOf = typedAsOf(options, window2, void 0, 0);
  return Object.freeze({ kind: "several", symbols: list, ...window2, ...asOf === void 0 ? {} : { asOf } });
}
function toRangeQuery(symbol, rawOptions, limits) {
  return toBucketedQuery("range", symbol, rawOptions, limits);
}
function toCandlesQuery(symbol, rawOptions, limits) {
  return toBucketedQuery("candles", symbol, rawOptions, limits);
}
function toTwapQuery(symbols, rawOptions, limits) {
  const options = optionsObject(rawOptions);
  const list = symbols === void 0 ? "all" : symbolList(symbols, limits);
  const { from, to } = toWindow(options);
  if (from === void 0 || to === void 0) throw missing(from);
  return Object.freeze({ kind: "twap", symbols: list, from, to });
}
function signalOf(rawOptions) {
  return checkSignal(optionsObject(rawOptions).signal);
}
function toBucketedQuery(kind, symbol, rawOptions, limits) {
  checkSymbol("symbol", symbol);
  const options = optionsObject(rawOptions);
  const limit = optionalInteger("limit", options.limit, "PRICE_INVALID_QUERY");
  if (limit !== void 0) checkLimit(limit, limits.maxLimit);
  const offset = optionalInteger("offset", options.offset, "PRICE_INVALID_QUERY") ?? 0;
  const { from, to } = toWindow(options);
  const interval = optionalInteger("interval", options.interval, "PRICE_INVALID_INTERVAL");
  if (interval === void 0 || interval < 1) {
    throw fail("PRICE_INVALID_INTERVAL", "interval", `interval must be an integer of at least 1 ms (got ${describeValue(options.interval)})`);
  }
  const origin = options.origin;
  if (origin !== void 0 && (typeof origin !== "number" || !Number.isSafeInteger(origin))) {
    throw fail("PRICE_INVALID_INTERVAL", "origin", `origin must be a safe integer, negative allowed (got ${describeValue(origin)})`);
  }
  const fill = options.fill === void 0 ? void 0 : checkChoice("fill", options.fill, ["prev"], "PRICE_INVALID_QUERY");
  const maxAge = optionalInteger("maxAge", options.maxAge, "PRICE_INVALID_QUERY");
  const fillMode = toFill(fill, maxAge);
  if (from === void 0 || to === void 0) throw missing(from);
  return Object.freeze({
    kind,
    symbol,
    ...toGrid(from, to, interval, origin),
    offset,
    ...limit === void 0 ? {} : { limit },
    ...fillMode === void 0 ? {} : { fill: fillMode }
  });
}
function missing(from) {
  const name = from === void 0 ? "from" : "to";
  return fail("PRICE_INVALID_RANGE", name, `this form needs both from and to (${name} is missing)`);
}
function typedAsOf(options, window2, limit, offset) {
  const direction = options.direction === void 0 ? void 0 : checkChoice("direction", options.direction, DIRECTIONS, "PRICE_INVALID_QUERY");
  const tolerance = optionalInteger("tolerance", options.tolerance, "PRICE_INVALID_QUERY");
  return toAsOf(direction, tolerance, { from: window2.from, to: window2.to, limit, offset }, NAMES2);
}
function symbolList(symbols, limits) {
  if (!Array.isArray(symbols)) throw fail("PRICE_INVALID_SYMBOL", "symbols", `symbols must be an array (got ${describeValue(symbols)})`);
  const distinct = /* @__PURE__ */ new Set();
  for (const symbol of symbols) {
    checkSymbol("symbols", symbol);
    distinct.add(symbol);
  }
  if (distinct.size > limits.maxSymbols) {
    throw fail("PRICE_INVALID_QUERY", "symbols", `symbols may name at most ${limits.maxSymbols} distinct symbols (got ${distinct.size})`);
  }
  return Object.freeze([...distinct]);
}
function optionsObject(options) {
  if (options === void 0) return {};
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw fail("PRICE_INVALID_QUERY", "options", `options must be an object (got ${describeValue(options)})`);
  }
  return options;
}
function toWindow(options) {
  const from = optionalInteger("from", options.from, "PRICE_INVALID_RANGE");
  const to = optionalInteger("to", options.to, "PRICE_INVALID_RANGE");
  checkOrder(from, to);
  return { ...from === void 0 ? {} : { from }, ...to === void 0 ? {} : { to } };
}
function optionalInteger(parameter, value, code) {
  if (value === void 0) return void 0;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw fail(code, parameter, `${parameter} must be a safe integer >= 0 (got ${describeValue(value)})`);
  }
  return value;
}

// src/keys/bytes.ts
var TWO_POW_32 = 2 ** 32;
function writeUint64(target, offset, value) {
  const high = Math.floor(value / TWO_POW_32);
  const view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  view.setUint32(offset, high);
  view.setUint32(offset + 4, value - high * TWO_POW_32);
}
function readUint64(source, offset) {
  const view = new DataView(source.buffer, source.byteOffset, source.byteLength);
  return view.getUint32(offset) * TWO_POW_32 + view.getUint32(offset + 4);
}
var ByteWriter = class {
  #bytes;
  #length = 0;
  constructor(capacity = 256) {
    this.#bytes = Buffer.allocUnsafe(capacity);
  }
  get length() {
    return this.#length;
  }
  #room(extra) {
    if (this.#length + extra <= this.#bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#length + extra, this.#bytes.length * 2));
    this.#bytes.copy(grown, 0, 0, this.#length);
    this.#bytes = grown;
  }
  byte(value) {
    this.#room(1);
    this.#bytes[this.#length++] = value;
    return this;
  }
  uint16(value) {
    this.#room(2);
    this.#bytes.writeUInt16BE(value, this.#length);
    this.#length += 2;
    return this;
  }
  uint32(value) {
    this.#room(4);
    this.#bytes.writeUInt32BE(value, this.#length);
    this.#length += 4;
    return this;
  }
  uint64(value) {
    this.#room(8);
    writeUint64(this.#bytes, this.#length, value);
    this.#length += 8;
    return this;
  }
  float64(value) {
    this.#room(8);
    this.#bytes.writeDoubleLE(value, this.#length);
    this.#length += 8;
    return this;
  }
  /** An unsigned LEB128 integer: 1 byte below 128, 2 below 16,384. */
  varint(value) {
    this.#room(8);
    let rest = value;
    while (rest >= 128) {
      this.#bytes[this.#length++] = rest % 128 | 128;
      rest = Math.floor(rest / 128);
    }
    this.#bytes[this.#length++] = rest;
    return this;
  }
  bytes(value) {
    this.#room(value.length);
    this.#bytes.set(value, this.#length);
    this.#length += value.length;
    return this;
  }
  /** A string's UTF-8 bytes, preceded by their length as a varint. */
  text(value) {
    const length = Buffer.byteLength(value, "utf8");
    this.varint(length);
    this.#room(length);
    this.#bytes.write(value, this.#length, "utf8");
    this.#length += length;
    return this;
  }
  /** Bytes preceded by their length as a varint. */
  sized(value) {
    return this.varint(value.length).bytes(value);
  }
  /** Overwrites one byte already written. */
  patch(offset, value) {
    if (offset >= this.#length) throw new RangeError(`offset ${offset} is past the ${this.#length} bytes written`);
    this.#bytes[offset] = value;
    return this;
  }
  /** Forgets what was written, keeping the memory, so one writer can serve many values. */
  reset() {
    this.#length = 0;
    return this;
  }
  /** The bytes written so far, as a view that the next write may change. */
  view() {
    return this.#bytes.subarray(0, this.#length);
  }
  /**
   * A string's bytes decoded from base64, preceded by their length as a
   * varint, when the string is canonical base64 (it decodes and re-encodes
   * to the same text): then true. Otherwise writes nothing and returns false.
   */
  base64(value) {
    const start = this.#length;
    const length = Buffer.byteLength(value, "base64");
    this.varint(length);
    this.#room(length);
    const written = this.#bytes.write(value, this.#length, "base64");
    if (written !== length || this.#bytes.toString("base64", this.#length, this.#length + written) !== value) {
      this.#length = start;
      return false;
    }
    this.#length += written;
    return true;
  }
  /** The bytes written, as a buffer of their own. */
  finish() {
    return Buffer.from(this.#bytes.subarray(0, this.#length));
  }
};
var MalformedBytes = class extends Error {
};
var ByteReader = class {
  bytes;
  offset;
  #end;
  constructor(bytes2, offset = 0, end = bytes2.length) {
    this.bytes = Buffer.isBuffer(bytes2) ? bytes2 : Buffer.from(bytes2.buffer, bytes2.byteOffset, bytes2.byteLength);
    this.offset = offset;
    this.#end = end;
  }
  get done() {
    return this.offset >= this.#end;
  }
  #take(length) {
    const at = this.offset;
    if (length < 0 || at + length > this.#end) throw new MalformedBytes(`needs ${length} bytes at offset ${at}, has ${this.#end - at}`);
    this.offset = at + length;
    return at;
  }
  byte() {
    return this.bytes[this.#take(1)];
  }
  uint16() {
    return this.bytes.readUInt16BE(this.#take(2));
  }
  uint32() {
    return this.bytes.readUInt32BE(this.#take(4));
  }
  uint64() {
    return readUint64(this.bytes, this.#take(8));
  }
  varint() {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const byte = this.byte();
      value += (byte & 127) * scale;
      if (byte < 128) return value;
      scale *= 128;
    }
    throw new MalformedBytes(`varint too long at offset ${this.offset}`);
  }
  /** Skips `length` bytes and returns where they start. */
  skip(length) {
    return this.#take(length);
  }
  /** A varint length, then that many bytes: returns their start (the end is `offset` after the call). */
  sized() {
    return this.#take(this.varint());
  }
  text() {
    const start = this.sized();
    return this.bytes.toString("utf8", start, this.offset);
  }
};

// src/keys/key-layout.ts
var PERIOD_MS = 36e5;
var HEAD_MS2 = 6e5;
var HEADS_PER_PERIOD = PERIOD_MS / HEAD_MS2;
var SEPARATOR = 0;
function periodOf(timestamp) {
  return Math.floor(timestamp / PERIOD_MS);
}
function logKey(period, sequence) {
  const key = Buffer.allocUnsafe(12);
  key.writeUInt32BE(period, 0);
  writeUint64(key, 4, sequence);
  return key;
}
function readLogKey(key) {
  if (key.length !== 12) throw new MalformedBytes(`a log key has 12 bytes, this one ${key.length}`);
  const bytes2 = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return { period: bytes2.readUInt32BE(0), sequence: readUint64(bytes2, 4) };
}
function chunkKey(period, symbol, part) {
  const symbolBytes = Buffer.byteLength(symbol, "utf8");
  const key = Buffer.allocUnsafe(4 + symbolBytes + 1 + 2);
  key.writeUInt32BE(period, 0);
  key.write(symbol, 4, "utf8");
  key[4 + symbolBytes] = SEPARATOR;
  key.writeUInt16BE(part, 5 + symbolBytes);
  return key;
}
function readChunkPeriod(key) {
  if (key.length < 4) throw new MalformedBytes(`a chunk key has at least 4 bytes, this one ${key.length}`);
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).readUInt32BE(0);
}
function headsKey(symbol, period) {
  const symbolBytes = Buffer.byteLength(symbol, "utf8");
  const key = Buffer.allocUnsafe(symbolBytes + 1 + 4);
  key.write(symbol, 0, "utf8");
  key[symbolBytes] = SEPARATOR;
  key.writeUInt32BE(period, symbolBytes + 1);
  return key;
}
function headsRange(symbol, first, last) {
  return { gte: headsKey(symbol, first), lte: headsKey(symbol, last) };
}
function readHeadsPeriod(key) {
  const bytes2 = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return bytes2.readUInt32BE(bytes2.length - 4);
}
function symbolKey(symbol) {
  return Buffer.from(symbol, "utf8");
}
function describeChunk(period, symbol, part) {
  return `chunk ${symbol}@${period * PERIOD_MS}+${PERIOD_MS}ms part ${part}`;
}
function describeHeads(symbol, period) {
  return `heads ${symbol}@${period * PERIOD_MS}+${PERIOD_MS}ms`;
}
function describeLog(period, sequence) {
  return `log entry ${sequence} of period ${period * PERIOD_MS}+${PERIOD_MS}ms`;
}

// src/keys/value-codec.ts
import { Packr } from "msgpackr";

// src/engine/exact-json.ts
function toExactJson(value, indent = 0) {
  if (!containsNegativeZero(value)) return JSON.stringify(value, null, indent) ?? "null";
  return writeJson(value, " ".repeat(indent), "") ?? "null";
}
function containsNegativeZero(value) {
  if (typeof value === "number") return Object.is(value, -0);
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(containsNegativeZero);
  for (const key of Object.keys(value)) {
    if (containsNegativeZero(value[key])) return true;
  }
  return false;
}
function writeJson(value, unit, pad) {
  if (value === null) return "null";
  switch (typeof value) {
    case "number":
      return Object.is(value, -0) ? "-0" : JSON.stringify(value);
    case "string":
    case "boolean":
    case "bigint":
      return JSON.stringify(value);
    case "undefined":
    case "function":
    case "symbol":
      return void 0;
  }
  const toJSON = value.toJSON;
  if (typeof toJSON === "function") return writeJson(toJSON.call(value), unit, pad);
  const inner = pad + unit;
  const open = unit === "" ? "" : `
${inner}`;
  const sep = unit === "" ? "," : `,
${inner}`;
  const close = unit === "" ? "" : `
${pad}`;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const items = value.map((item) => writeJson(item, unit, inner) ?? "null");
    return `[${open}${items.join(sep)}${close}]`;
  }
  const colon = unit === "" ? ":" : ": ";
  const members = [];
  for (const key of Object.keys(value)) {
    const text = writeJson(value[key], unit, inner);
    if (text !== void 0) members.push(`${JSON.stringify(key)}${colon}${text}`);
  }
  if (members.length === 0) return "{}";
  return `{${open}${members.join(sep)}${close}}`;
}

// src/keys/value-codec.ts
var STORE_FORMAT = 3;
var SIGNATURE_BYTES = 1;
var JSON_BODY = 2;
var KNOWN_FLAGS = SIGNATURE_BYTES | JSON_BODY;
var HEADER_BYTES = 9;
var packr = new Packr({ useRecords: false, mapsAsObjects: true, useFloat32: 0, moreTypes: false });
function writeValue(writer, record) {
  const body = [record.signature, record.permawebTx, record.version, record.source, record.extras];
  if (needsJsonBody(body)) return writer.byte(JSON_BODY).float64(record.value).bytes(Buffer.from(toExactJson(body), "utf8"));
  const flagsAt = writer.length;
  writer.byte(0).float64(record.value);
  if (record.signature.length > 0 && writer.base64(record.signature)) writer.patch(flagsAt, SIGNATURE_BYTES);
  else writer.text(record.signature);
  return writer.text(record.permawebTx).text(record.version).bytes(packr.pack([record.source, record.extras]));
}
function peekValue(bytes2, start, end) {
  if (end - start < HEADER_BYTES || (bytes2[start] & ~KNOWN_FLAGS) !== 0) return void 0;
  return bytes2.readDoubleLE(start + 1);
}
function decodeValue(bytes2, start, end, place, provider, minutes) {
  let signature;
  let permawebTx;
  let version;
  let source;
  let extras;
  if (end - start < HEADER_BYTES) throw corrupt(place, "is shorter than its header");
  const flags = bytes2[start];
  if ((flags & ~KNOWN_FLAGS) !== 0) throw corrupt(place, `has unknown flags ${flags}`);
  try {
    if ((flags & JSON_BODY) !== 0) {
      const body = JSON.parse(bytes2.toString("utf8", start + HEADER_BYTES, end));
      if (!Array.isArray(body) || body.length !== 5) throw new Error("the JSON body is not a 5-element array");
      [signature, permawebTx, version, source, extras] = body;
    } else {
      const reader = new ByteReader(bytes2, start + HEADER_BYTES, end);
      const signatureStart = reader.sized();
      signature = bytes2.toString((flags & SIGNATURE_BYTES) !== 0 ? "base64" : "utf8", signatureStart, reader.offset);
      permawebTx = reader.text();
      version = reader.text();
      const rest = unpackRest(bytes2, reader.offset, end);
      if (!Array.isArray(rest) || rest.length !== 2) throw new Error("the packed rest is not a 2-element array");
      [source, extras] = rest;
    }
  } catch (cause) {
    throw corrupt(place, "cannot be decoded", cause);
  }
  if (typeof signature !== "string" || typeof permawebTx !== "string" || typeof version !== "string" || !isObject(source) || extras !== null && !isObject(extras)) {
    throw corrupt(place, "does not hold a record body");
  }
  const record = {
    id: place.id,
    symbol: place.symbol,
    provider: provider.id,
    value: bytes2.readDoubleLE(start + 1),
    signature,
    permawebTx,
    version,
    source,
    timestamp: place.timestamp
  };
  if (extras !== null) {
    for (const field of Object.keys(extras)) {
      Object.defineProperty(record, field, { value: extras[field], enumerable: true, writable: true, configurable: true });
    }
  }
  record.providerPublicKey = provider.publicKey;
  if (minutes !== void 0) record.minutes = minutes;
  return record;
}
function valueJson(bytes2, start, end, prefix, suffix) {
  if (end - start < HEADER_BYTES) return void 0;
  const flags = bytes2[start];
  if ((flags & ~SIGNATURE_BYTES) !== 0) return void 0;
  try {
    const value = bytes2.readDoubleLE(start + 1);
    const reader = new ByteReader(bytes2, start + HEADER_BYTES, end);
    const signatureStart = reader.sized();
    const signature = (flags & SIGNATURE_BYTES) !== 0 ? `"${bytes2.toString("base64", signatureStart, reader.offset)}"` : JSON.stringify(bytes2.toString("utf8", signatureStart, reader.offset));
    const permawebTx = reader.text();
    const version = reader.text();
    const rest = unpackRest(bytes2, reader.offset, end);
    if (!Array.isArray(rest) || rest.length !== 2 || rest[1] !== null || !isObject(rest[0])) return void 0;
    return `${prefix},"value":${Object.is(value, -0) ? "-0" : JSON.stringify(value)},"signature":${signature},"permawebTx":${JSON.stringify(permawebTx)},"version":${JSON.stringify(version)},"source":${toExactJson(rest[0])}${suffix}`;
  } catch {
    return void 0;
  }
}
function describePlace(place) {
  return `${place.symbol}@${place.timestamp}#${place.id} in ${typeof place.entry === "string" ? place.entry : place.entry()}`;
}
var scratch = Buffer.allocUnsafeSlow(4096);
function unpackRest(bytes2, start, end) {
  const length = end - start;
  if (length > scratch.length) scratch = Buffer.allocUnsafeSlow(Math.max(length, scratch.length * 2));
  bytes2.copy(scratch, 0, start, end);
  return packr.unpack(scratch, { start: 0, end: length });
}
function corrupt(place, problem, cause) {
  const key = describePlace(place);
  return new PriceStoreError("PRICE_CORRUPT_VALUE", `value of ${key} ${problem}`, { cause, details: { key } });
}
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function needsJsonBody(value) {
  if (typeof value === "number") return Object.is(value, -0);
  if (typeof value === "string") return !value.isWellFormed();
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(needsJsonBody);
  for (const field of Object.keys(value)) {
    if (field === "__proto__" || !field.isWellFormed()) return true;
    if (needsJsonBody(value[field])) return true;
  }
  return false;
}

// src/keys/log-codec.ts
var scratch2 = new ByteWriter(4096);
var LogEntryWriter = class {
  #writer = new ByteWriter(64 * 1024).byte(STORE_FORMAT);
  #places = [];
  /** Appends a record; `writeValue` writes its value into the writer it is given. */
  add(symbol, timestamp, id, writeValue2) {
    const writer = this.#writer.text(symbol).uint64(timestamp);
    const idLength = Buffer.byteLength(id, "utf8");
    writer.text(id);
    const idEnd = writer.length;
    writeValue2(scratch2.reset());
    const value = scratch2.view();
    writer.sized(value);
    this.#places.push({ symbol, timestamp, idStart: idEnd - idLength, idEnd, valueStart: writer.length - value.length, valueEnd: writer.length });
  }
  /** The entry's bytes and where each record sits in them. */
  finish() {
    return { bytes: this.#writer.finish(), places: this.#places };
  }
};
function readLogEntry(bytes2, visit) {
  const reader = new ByteReader(bytes2);
  const version = reader.byte();
  if (version !== STORE_FORMAT) throw new MalformedBytes(`version ${version}, expected ${STORE_FORMAT}`);
  while (!reader.done) {
    const symbol = reader.text();
    const timestamp = reader.uint64();
    const idStart = reader.sized();
    const idEnd = reader.offset;
    const valueStart = reader.sized();
    visit(symbol, timestamp, idStart, idEnd, valueStart, reader.offset);
  }
}

// src/records/validate-record.ts
var KNOWN_FIELDS = /* @__PURE__ */ new Set([
  "id",
  "symbol",
  "provider",
  "value",
  "signature",
  "permawebTx",
  "version",
  "source",
  "timestamp",
  "providerPublicKey",
  "minutes"
]);
function validateRecord(input, index, provider) {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw invalid(index, void 0, `record ${index} must be an object (got ${describeValue(input)})`);
  }
  const record = input;
  const fail2 = (field, rule) => {
    throw invalid(index, field, `record ${index}: ${field} ${rule} (got ${describeValue(record[field])})`);
  };
  const idIssue = idProblem(record.id);
  if (idIssue !== void 0) fail2("id", idIssue);
  const symbolIssue = symbolProblem(record.symbol);
  if (symbolIssue !== void 0) fail2("symbol", symbolIssue);
  if (record.provider !== provider.id) fail2("provider", `must be this store's provider id ${JSON.stringify(provider.id)}`);
  if (typeof record.value !== "number" || !Number.isFinite(record.value)) fail2("value", "must be a finite number");
  if (typeof record.signature !== "string" || record.signature.length === 0) fail2("signature", "must be a non-empty string");
  if (typeof record.permawebTx !== "string") fail2("permawebTx", "must be a string");
  if (typeof record.version !== "string") fail2("version", "must be a string");
  if (!isPlainObject(record.source)) fail2("source", "must be a JSON object");
  if (!isJsonValue(record.source)) fail2("source", "must hold only JSON values (null, booleans, finite numbers, strings, arrays, objects)");
  if (!Number.isSafeInteger(record.timestamp) || record.timestamp < 0) {
    fail2("timestamp", "must be a safe integer >= 0 (milliseconds since the Unix epoch)");
  }
  if (record.providerPublicKey !== void 0 && record.providerPublicKey !== provider.publicKey) {
    fail2("providerPublicKey", "must be absent or equal this store's provider public key");
  }
  let extras = null;
  for (const field of Object.keys(record)) {
    if (KNOWN_FIELDS.has(field)) continue;
    const value = record[field];
    if (!isJsonValue(value)) fail2(field, "must be a JSON value (null, boolean, finite number, string, array, object)");
    extras ??= {};
    Object.defineProperty(extras, field, { value, enumerable: true, writable: true, configurable: true });
  }
  return {
    id: record.id,
    symbol: record.symbol,
    timestamp: record.timestamp,
    value: record.value,
    signature: record.signature,
    permawebTx: record.permawebTx,
    version: record.version,
    source: record.source,
    extras
  };
}
function invalid(index, field, message) {
  return new PriceStoreError("PRICE_INVALID_RECORD", message, {
    details: field === void 0 ? { index } : { index, field }
  });
}
function isPlainObject(value) {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
function isJsonValue(value, depth = 0) {
  if (depth > 64) return false;
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object":
      if (value === null) return true;
      if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth + 1));
      return isPlainObject(value) && Object.values(value).every((item) => isJsonValue(item, depth + 1));
    default:
      return false;
  }
}

// src/records/validate-batch.ts
function validateBatch(records, provider) {
  if (!isIterableObject(records)) {
    const hint = isAsyncIterable(records) ? " (an async iterable is not accepted: collect it into arrays and write each)" : "";
    throw new PriceStoreError("PRICE_INVALID_RECORD", `records must be an iterable of records, such as an array${hint} (got ${describeValue(records)})`, {
      details: { parameter: "records" }
    });
  }
  const stored = [];
  let index = 0;
  for (const record of records) stored.push(validateRecord(record, index++, provider));
  return stored;
}
function isIterableObject(value) {
  return typeof value === "object" && value !== null && typeof value[Symbol.iterator] === "function";
}
function isAsyncIterable(value) {
  return typeof value === "object" && value !== null && typeof value[Symbol.asyncIterator] === "function";
}

// src/store/format.ts
var FORMAT_KEY = "format";
var PROVIDER_KEY = "provider";
async function checkFormat(meta, root, provider) {
  const [format, storedProvider] = await meta.getMany([FORMAT_KEY, PROVIDER_KEY]);
  if (format === void 0) {
    const anything = (await root.keys({ limit: 1, keyEncoding: "view" }).all()).length > 0;
    if (anything) {
      throw new PriceStoreError("PRICE_UNSUPPORTED_FORMAT", "the database holds data but no format version; it was not written by price-store");
    }
    await meta.batch([
      { type: "put", key: FORMAT_KEY, value: String(STORE_FORMAT) },
      { type: "put", key: PROVIDER_KEY, value: JSON.stringify({ name: provider.name, id: provider.id, publicKey: provider.publicKey }) }
    ]);
    return;
  }
  if (format !== String(STORE_FORMAT)) {
    const earlier = format === "1" || format === "2";
    throw new PriceStoreError(
      "PRICE_UNSUPPORTED_FORMAT",
      `the database has format version ${JSON.stringify(format)}; this release reads version ${STORE_FORMAT} only` + (earlier ? ". It was written by an unreleased development version: delete the directory and import the records again (price-store import)" : "")
    );
  }
  const stored = parseProvider(storedProvider);
  if (stored === void 0) throw new PriceStoreError("PRICE_UNSUPPORTED_FORMAT", "the database records no readable provider");
  if (stored.id !== provider.id || stored.publicKey !== provider.publicKey) {
    const differs = stored.id !== provider.id ? "id" : "public key";
    throw new PriceStoreError(
      "PRICE_PROVIDER_MISMATCH",
      `the store was created for provider id ${JSON.stringify(stored.id)} with public key ${JSON.stringify(stored.publicKey)}; it was opened with id ${JSON.stringify(provider.id)} and public key ${JSON.stringify(provider.publicKey)} (the ${differs} differs). Open it with the provider it was created for, or import the records into a new store`,
      { details: { field: "provider" } }
    );
  }
}
function parseProvider(text) {
  if (text === void 0) return void 0;
  try {
    const value = JSON.parse(text);
    return typeof value.id === "string" && typeof value.publicKey === "string" && typeof value.name === "string" ? value : void 0;
  } catch {
    return void 0;
  }
}

// src/engine/answer-json.ts
var jsonOfRecord = /* @__PURE__ */ new WeakMap();
var JSON_PIECE_CHARS = 64 * 1024;
function* answerJsonPieces(answer, pieceChars = JSON_PIECE_CHARS) {
  const deferred = answer instanceof DeferredAnswer ? answer : void 0;
  const items = answer;
  let piece = "[";
  for (let i = 0; i < answer.length; i++) {
    const json = deferred === void 0 ? recordToJson(items[i]).json : deferred.json(i) ?? recordToJson(deferred.item(i)).json;
    piece += i === 0 ? json : "," + json;
    if (piece.length >= pieceChars) {
      yield piece;
      piece = "";
    }
  }
  yield piece + "]";
}
function recordJson(record) {
  return recordToJson(record).json;
}
function recordToJson(record) {
  if (!Object.isFrozen(record)) return measured(toExactJson(record));
  let sized = jsonOfRecord.get(record);
  if (sized === void 0) {
    sized = measured(toExactJson(record));
    jsonOfRecord.set(record, sized);
  }
  return sized;
}
function measured(json) {
  return { json, bytes: Buffer.byteLength(json, "utf8") };
}

// src/store/row.ts
var UTF8_ID = (bytes2, start, end) => bytes2.toString("utf8", start, end);
var Row = class {
  symbol;
  timestamp;
  #bytes;
  #idStart;
  #idEnd;
  #readId;
  #valueStart;
  #valueEnd;
  #entry;
  #provider;
  #id;
  #record;
  #sampled;
  /**
   * @param bytes holds the id at `idStart..idEnd` (read with `readId`) and the value at `valueStart..valueEnd`
   * @param entry names the stored entry holding the value, for error messages (computed on demand when a function)
   */
  constructor(symbol, timestamp, bytes2, idStart, idEnd, valueStart, valueEnd, entry, provider, readId = UTF8_ID) {
    this.symbol = symbol;
    this.timestamp = timestamp;
    this.#bytes = bytes2;
    this.#idStart = idStart;
    this.#idEnd = idEnd;
    this.#readId = readId;
    this.#valueStart = valueStart;
    this.#valueEnd = valueEnd;
    this.#entry = entry;
    this.#provider = provider;
  }
  get id() {
    this.#id ??= this.#readId(this.#bytes, this.#idStart, this.#idEnd);
    return this.#id;
  }
  /** The id's stored bytes, for writers that copy a row into a new entry. */
  get idBytes() {
    return this.#bytes.subarray(this.#idStart, this.#idEnd);
  }
  /** Whether the stored id bytes are UTF-8 (as in the log and heads) rather than a compact form. */
  get idIsUtf8() {
    return this.#readId === UTF8_ID;
  }
  /** The stored value's length in bytes. */
  get valueLength() {
    return this.#valueEnd - this.#valueStart;
  }
  /** The stored value bytes (a view). */
  get value() {
    return this.#bytes.subarray(this.#valueStart, this.#valueEnd);
  }
  record() {
    this.#record ??= this.#decode(void 0);
    return this.#record;
  }
  /** The range form's record, decoded straight into its shape unless the plain record is at hand. */
  sampled() {
    this.#sampled ??= this.#record === void 0 ? this.#decode(minuteOfHour(this.timestamp)) : withMinutes(this.#record);
    return this.#sampled;
  }
  /**
   * The record's JSON text as the answers write it (with `minutes` for the
   * range form), straight from the stored bytes when the record is not
   * decoded yet: no record object is made, so a large answer serialised
   * this way costs far less CPU and garbage.
   */
  json(withMinutes2) {
    const decoded = withMinutes2 ? this.#sampled : this.#record;
    if (decoded !== void 0) return recordJson(decoded);
    const provider = this.#provider;
    const prefix = `{"id":${JSON.stringify(this.id)},"symbol":${JSON.stringify(this.symbol)},"provider":${JSON.stringify(provider.id)}`;
    const minutes = withMinutes2 ? `,"minutes":${minuteOfHour(this.timestamp)}` : "";
    const suffix = `,"timestamp":${this.timestamp},"providerPublicKey":${JSON.stringify(provider.publicKey)}${minutes}}`;
    return valueJson(this.#bytes, this.#valueStart, this.#valueEnd, prefix, suffix) ?? recordJson(withMinutes2 ? this.sampled() : this.record());
  }
  /**
   * The id, timestamp and value, read from the value's fixed slot without
   * decoding the body. A damaged header is decoded in full, which fails
   * with the store's own corruption error.
   */
  ref() {
    const value = this.#record?.value ?? peekValue(this.#bytes, this.#valueStart, this.#valueEnd);
    return { id: this.id, timestamp: this.timestamp, value: value ?? this.record().value };
  }
  #decode(minutes) {
    const place = { symbol: this.symbol, timestamp: this.timestamp, id: this.id, entry: this.#entry };
    return freezeRecord(decodeValue(this.#bytes, this.#valueStart, this.#valueEnd, place, this.#provider, minutes));
  }
};
function compareRows(a, b) {
  return a.timestamp - b.timestamp || compareIds(a.id, b.id);
}
function freezeRecord(record) {
  for (const field in record) {
    const value = record[field];
    if (typeof value === "object" && value !== null) deepFreeze(value);
  }
  return Object.freeze(record);
}
function deepFreeze(value) {
  Object.freeze(value);
  for (const field of Object.keys(value)) {
    const nested = value[field];
    if (typeof nested === "object" && nested !== null) deepFreeze(nested);
  }
}

// src/store/open-area.ts
var OpenArea = class _OpenArea {
  static EMPTY = new _OpenArea(/* @__PURE__ */ new Map(), /* @__PURE__ */ new Map(), 0);
  #periods;
  /** The periods holding rows of each symbol, ascending. */
  #bySymbol;
  /** Bytes of log entries held: what sealing frees. */
  bytes;
  constructor(periods, bySymbol, bytes2) {
    this.#periods = periods;
    this.#bySymbol = bySymbol;
    this.bytes = bytes2;
  }
  /** The open rows of `symbol` in `period`, ascending; empty when none. */
  rows(symbol, period) {
    return this.#periods.get(period)?.symbols.get(symbol) ?? NO_ROWS;
  }
  /** The periods holding open rows of `symbol`, ascending. */
  periodsOf(symbol) {
    return this.#bySymbol.get(symbol) ?? NO_PERIODS;
  }
  /** Every period with open rows, ascending. */
  periods() {
    return [...this.#periods.keys()].sort((a, b) => a - b);
  }
  /** The rows of a period by symbol, and the log entries holding them. */
  period(period) {
    return this.#periods.get(period);
  }
  /** The area with the writes of one committed batch (or one replayed log entry) added. */
  withWrites(writes) {
    if (writes.length === 0) return this;
    const periods = new Map(this.#periods);
    const bySymbol = new Map(this.#bySymbol);
    let bytes2 = this.bytes;
    for (const write of writes) {
      const held = periods.get(write.period);
      const symbols = new Map(held?.symbols);
      for (const [symbol, written] of write.rows) {
        const before = symbols.get(symbol);
        symbols.set(symbol, mergeRows(before ?? NO_ROWS, written));
        if (before === void 0) bySymbol.set(symbol, insertSorted(bySymbol.get(symbol) ?? NO_PERIODS, write.period));
      }
      periods.set(write.period, {
        symbols,
        logKeys: [...held?.logKeys ?? [], write.logKey],
        bytes: (held?.bytes ?? 0) + write.bytes
      });
      bytes2 += write.bytes;
    }
    return new _OpenArea(periods, bySymbol, bytes2);
  }
  /** The area without a period, once it is sealed. */
  withoutPeriod(period) {
    const held = this.#periods.get(period);
    if (held === void 0) return this;
    const periods = new Map(this.#periods);
    periods.delete(period);
    const bySymbol = new Map(this.#bySymbol);
    for (const symbol of held.symbols.keys()) {
      const left = (bySymbol.get(symbol) ?? NO_PERIODS).filter((p) => p !== period);
      if (left.length === 0) bySymbol.delete(symbol);
      else bySymbol.set(symbol, left);
    }
    return new _OpenArea(periods, bySymbol, this.bytes - held.bytes);
  }
};
var NO_ROWS = Object.freeze([]);
var NO_PERIODS = Object.freeze([]);
function mergeRows(held, written) {
  const sorted = sortUnique(written);
  const last = held[held.length - 1];
  const first = sorted[0];
  if (last === void 0 || first !== void 0 && compareRows(first, last) > 0) return Object.freeze([...held, ...sorted]);
  const merged = [];
  let i = 0;
  let j = 0;
  while (i < held.length || j < sorted.length) {
    const a = held[i];
    const b = sorted[j];
    const order = a === void 0 ? 1 : b === void 0 ? -1 : compareRows(a, b);
    if (order < 0) merged.push(a), i++;
    else if (order > 0) merged.push(b), j++;
    else merged.push(b), i++, j++;
  }
  return Object.freeze(merged);
}
function sortUnique(rows) {
  let ordered = true;
  for (let i = 1; i < rows.length && ordered; i++) ordered = compareRows(rows[i - 1], rows[i]) < 0;
  if (ordered) return [...rows];
  const sorted = rows.map((row, index) => ({ row, index })).sort((a, b) => compareRows(a.row, b.row) || a.index - b.index);
  const unique = [];
  for (let i = 0; i < sorted.length; i++) {
    const next = sorted[i + 1];
    const row = sorted[i].row;
    if (next === void 0 || compareRows(row, next.row) !== 0) unique.push(row);
  }
  return unique;
}
function insertSorted(periods, period) {
  if (periods.includes(period)) return periods;
  return Object.freeze([...periods, period].sort((a, b) => a - b));
}

// src/keys/chunk-codec.ts
var MAX_PART_RECORDS = 4096;
var UUID_TAG = 0;
function encodeChunkPart(periodStart, partCount, records) {
  const bodyBytes = records.reduce((sum, record) => sum + record.value.length, 0);
  const writer = new ByteWriter(bodyBytes + records.length * 48 + 16);
  writer.byte(STORE_FORMAT).uint16(partCount).varint(records.length);
  let previous = periodStart;
  for (const record of records) {
    writer.varint(record.timestamp - previous);
    previous = record.timestamp;
    const uuid = record.idBytes.length === 36 ? uuidBytes(record.idBytes) : void 0;
    if (uuid !== void 0) writer.varint(UUID_TAG).bytes(uuid);
    else writer.varint(record.idBytes.length + 1).bytes(record.idBytes);
    writer.varint(record.value.length);
  }
  for (const record of records) writer.bytes(record.value);
  return writer.finish();
}
function readPartCount(bytes2) {
  const reader = new ByteReader(bytes2);
  const version = reader.byte();
  if (version !== STORE_FORMAT) throw new MalformedBytes(`version ${version}, expected ${STORE_FORMAT}`);
  return reader.uint16();
}
var COLUMN_FIELDS = 5;
function parseChunkPart(bytes2, periodStart) {
  const reader = new ByteReader(bytes2);
  const version = reader.byte();
  if (version !== STORE_FORMAT) throw new MalformedBytes(`version ${version}, expected ${STORE_FORMAT}`);
  reader.uint16();
  const count = reader.varint();
  if (count > MAX_PART_RECORDS) throw new MalformedBytes(`${count} records, more than a part holds`);
  const timestamps = new Float64Array(count);
  const fields = new Float64Array(count * COLUMN_FIELDS);
  let timestamp = periodStart;
  for (let i = 0, at = 0; i < count; i++, at += COLUMN_FIELDS) {
    timestamp += reader.varint();
    const tag = reader.varint();
    const idLength = tag === UUID_TAG ? 16 : tag - 1;
    const idStart = reader.skip(idLength);
    timestamps[i] = timestamp;
    fields[at] = idStart;
    fields[at + 1] = idStart + idLength;
    fields[at + 2] = tag === UUID_TAG ? 1 : 0;
    fields[at + 4] = reader.varint();
  }
  let valueStart = reader.offset;
  for (let i = 0, at = 0; i < count; i++, at += COLUMN_FIELDS) {
    const valueEnd = valueStart + fields[at + 4];
    if (valueEnd > bytes2.length) throw new MalformedBytes(`record ${i} ends after the part`);
    fields[at + 3] = valueStart;
    fields[at + 4] = valueEnd;
    valueStart = valueEnd;
  }
  if (valueStart !== bytes2.length) throw new MalformedBytes(`${bytes2.length - valueStart} bytes after the last record`);
  return { count, timestamps, fields };
}
var HEX_PAIRS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));
function readCompactId(bytes2, start) {
  let text = "";
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) text += "-";
    text += HEX_PAIRS[bytes2[start + i]];
  }
  return text;
}
function uuidBytes(idBytes) {
  const out = Buffer.allocUnsafe(16);
  let at = 0;
  for (let i = 0; i < 36; i++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (idBytes[i] !== 45) return void 0;
      continue;
    }
    const high = hexValue(idBytes[i]);
    const low = hexValue(idBytes[++i]);
    if (i === 8 || i === 13 || i === 18 || i === 23 || high < 0 || low < 0) return void 0;
    out[at++] = high * 16 + low;
  }
  return out;
}
function hexValue(byte) {
  if (byte >= 48 && byte <= 57) return byte - 48;
  if (byte >= 97 && byte <= 102) return byte - 87;
  return -1;
}

// src/store/hot-tails.ts
var EMPTY_COMPLETE_TAIL = Object.freeze({ rows: Object.freeze([]), complete: true });
var HotTails = class {
  perSymbol;
  #tails = /* @__PURE__ */ new Map();
  /** Bumped by every batch that touches the symbol; a load started at an older version is stale. */
  #versions = /* @__PURE__ */ new Map();
  constructor(perSymbol) {
    this.perSymbol = perSymbol;
  }
  /** The write version of a symbol, to pass back to {@link HotTails.install}. */
  version(symbol) {
    return this.#versions.get(symbol) ?? 0;
  }
  has(symbol) {
    return this.#tails.has(symbol);
  }
  /**
   * Installs a tail read from disk, newest first, unless a write to the
   * symbol committed after `version` was taken.
   */
  install(symbol, version, rows) {
    if (this.version(symbol) !== version) return;
    this.#tails.set(symbol, { rows: Object.freeze([...rows]), complete: rows.length < this.perSymbol });
  }
  /**
   * Merges a committed batch's rows, grouped by symbol. Call synchronously
   * after the commit. A symbol in `newSymbols` had no records before, so the
   * batch alone is its whole tail.
   */
  apply(rowsBySymbol2, newSymbols) {
    for (const [symbol, written] of rowsBySymbol2) {
      this.#versions.set(symbol, this.version(symbol) + 1);
      const tail = this.#tails.get(symbol) ?? (newSymbols.has(symbol) ? EMPTY_COMPLETE_TAIL : void 0);
      if (tail !== void 0) this.#tails.set(symbol, merge(tail, written, this.perSymbol));
    }
  }
  /**
   * A view of the tails of `symbols` as they are now, or `undefined` when
   * some symbol has no tail loaded. Symbols absent from `known` have no
   * records and need none.
   */
  capture(symbols, known) {
    const captured = /* @__PURE__ */ new Map();
    const present = [];
    for (const symbol of symbols) {
      if (!known.has(symbol)) continue;
      const tail = this.#tails.get(symbol);
      if (tail === void 0) return void 0;
      captured.set(symbol, tail);
      present.push(symbol);
    }
    return new TailView(captured, present);
  }
};
var TailView = class {
  #tails;
  #symbols;
  constructor(tails, symbols) {
    this.#tails = tails;
    this.#symbols = symbols;
  }
  /**
   * Whether the captured tails hold every row the plan's reads need: a
   * newest-first read needs its newest `limit` rows, any other read all
   * rows of its window.
   */
  canAnswer(plan) {
    return this.#symbols.every((symbol) => plan.reads.every((read) => this.#covers(symbol, read, read.reverse ? read.limit ?? Number.POSITIVE_INFINITY : Number.POSITIVE_INFINITY)));
  }
  async *scan(symbol, options) {
    yield this.scanNow(symbol, options);
  }
  scanNow(symbol, options) {
    const rows = this.#tails.get(symbol)?.rows ?? [];
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const found = [];
    if (options.reverse) {
      for (let i = 0; i < rows.length && found.length < limit; i++) {
        const row = rows[i];
        if (inside(row.timestamp, options)) found.push(row);
        else if (options.from !== void 0 && row.timestamp < options.from) break;
      }
    } else {
      for (let i = rows.length - 1; i >= 0 && found.length < limit; i--) {
        const row = rows[i];
        if (inside(row.timestamp, options)) found.push(row);
        else if (options.to !== void 0 && row.timestamp > options.to) break;
      }
    }
    return found;
  }
  async symbols() {
    return this.#symbols;
  }
  /**
   * The newest `needed` records of the window are all in the tail when the
   * tail holds that many of them, holds the whole symbol, or starts before
   * the window does (anything older than the tail is older than `from`).
   */
  #covers(symbol, window2, needed) {
    const tail = this.#tails.get(symbol);
    if (tail === void 0) return true;
    if (tail.complete) return true;
    const oldest = tail.rows[tail.rows.length - 1];
    if (oldest !== void 0 && window2.from !== void 0 && window2.from > oldest.timestamp) return true;
    let matching = 0;
    for (const row of tail.rows) {
      if (inside(row.timestamp, window2) && ++matching >= needed) return true;
    }
    return false;
  }
};
function inside(timestamp, window2) {
  return (window2.from === void 0 || timestamp >= window2.from) && (window2.to === void 0 || timestamp <= window2.to);
}
function merge(tail, written, perSymbol) {
  const newestFirst = [...written].sort((a, b) => compareRows(b, a));
  const newestCached = tail.rows[0];
  const oldestWritten = newestFirst[newestFirst.length - 1];
  if (oldestWritten !== void 0 && (newestCached === void 0 || compareRows(oldestWritten, newestCached) > 0) && !hasRepeatedKey(newestFirst)) {
    const rows2 = newestFirst.length >= perSymbol ? newestFirst.slice(0, perSymbol) : [...newestFirst, ...tail.rows.slice(0, perSymbol - newestFirst.length)];
    return { rows: Object.freeze(rows2), complete: tail.complete && newestFirst.length + tail.rows.length <= perSymbol };
  }
  const oldest = tail.rows[tail.rows.length - 1];
  const byKey = /* @__PURE__ */ new Map();
  for (const row of tail.rows) byKey.set(keyOf(row), row);
  for (const row of written) {
    if (!tail.complete && oldest !== void 0 && compareRows(row, oldest) < 0) continue;
    byKey.set(keyOf(row), row);
  }
  const rows = [...byKey.values()].sort((a, b) => compareRows(b, a));
  return { rows: Object.freeze(rows.slice(0, perSymbol)), complete: tail.complete && rows.length <= perSymbol };
}
function hasRepeatedKey(sorted) {
  for (let i = 1; i < sorted.length; i++) if (compareRows(sorted[i - 1], sorted[i]) === 0) return true;
  return false;
}
function keyOf(row) {
  return `${row.timestamp}\0${row.id}`;
}

// src/store/lru.ts
var Lru = class {
  capacity;
  #weigh;
  #entries = /* @__PURE__ */ new Map();
  #weight = 0;
  constructor(capacity, weigh) {
    this.capacity = capacity;
    this.#weigh = weigh;
  }
  /** Total weight held. */
  get weight() {
    return this.#weight;
  }
  get size() {
    return this.#entries.size;
  }
  /** The value, marked as just used; `undefined` when absent. */
  get(key) {
    const entry = this.#entries.get(key);
    if (entry === void 0) return void 0;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }
  has(key) {
    return this.#entries.has(key);
  }
  set(key, value) {
    this.delete(key);
    const weight = this.#weigh(value);
    if (weight > this.capacity) return;
    this.#entries.set(key, { value, weight });
    this.#weight += weight;
    for (const [oldest, entry] of this.#entries) {
      if (this.#weight <= this.capacity) break;
      this.#entries.delete(oldest);
      this.#weight -= entry.weight;
    }
  }
  delete(key) {
    const entry = this.#entries.get(key);
    if (entry === void 0) return;
    this.#entries.delete(key);
    this.#weight -= entry.weight;
  }
  clear() {
    this.#entries.clear();
    this.#weight = 0;
  }
};

// src/keys/heads-codec.ts
function encodeHeads(periodStart, count, heads) {
  const writer = new ByteWriter(heads.reduce((sum, head) => sum + head.value.length + 64, 8));
  writer.byte(STORE_FORMAT).varint(count).byte(heads.length);
  for (const head of heads) writer.varint(head.timestamp - periodStart).sized(head.idBytes).sized(head.value);
  return writer.finish();
}
function readHeads(bytes2, periodStart, visit) {
  const reader = new ByteReader(bytes2);
  const version = reader.byte();
  if (version !== STORE_FORMAT) throw new MalformedBytes(`version ${version}, expected ${STORE_FORMAT}`);
  const count = reader.varint();
  const heads = reader.byte();
  if (heads > HEADS_PER_PERIOD) throw new MalformedBytes(`${heads} heads, more than a period has`);
  for (let i = 0; i < heads; i++) {
    const timestamp = periodStart + reader.varint();
    const idStart = reader.sized();
    const idEnd = reader.offset;
    const valueStart = reader.sized();
    visit(timestamp, idStart, idEnd, valueStart, reader.offset);
  }
  if (!reader.done) throw new MalformedBytes("bytes after the last head");
  return count;
}

// src/store/heads-index.ts
function headsEntryOf(period, records) {
  const heads = [];
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    const next = records[i + 1];
    if (next === void 0 || Math.floor(next.timestamp / HEAD_MS2) !== Math.floor(record.timestamp / HEAD_MS2)) heads.push(record);
  }
  return encodeHeads(period * PERIOD_MS, records.length, heads);
}
function headRows(symbol, period, bytes2, provider) {
  const rows = [];
  const entry = describeHeads(symbol, period);
  try {
    const records = readHeads(bytes2, period * PERIOD_MS, (timestamp, idStart, idEnd, valueStart, valueEnd) => {
      rows.push(new Row(symbol, timestamp, bytes2, idStart, idEnd, valueStart, valueEnd, entry, provider));
    });
    return Object.assign(rows, { records });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new PriceStoreError("PRICE_CORRUPT_VALUE", `${entry} cannot be decoded: ${reason}`, { cause: err, details: { key: entry } });
  }
}

// src/store/row-list.ts
var RowArray = class _RowArray {
  static EMPTY = new _RowArray([]);
  #rows;
  constructor(rows) {
    this.#rows = rows;
  }
  get length() {
    return this.#rows.length;
  }
  timestampAt(index) {
    return this.#rows[index].timestamp;
  }
  rowAt(index) {
    return this.#rows[index];
  }
};
var MIN_ROW_WEIGHT = 64;
var SealedChunk = class {
  length;
  /** Stored bytes plus a small allowance per record: the chunk's weight in a cache. */
  weight;
  #symbol;
  #provider;
  #parts;
  #columns;
  #entries;
  /** Every record's timestamp, all parts in order (the one part's own array when there is one). */
  #timestamps;
  #rows;
  /**
   * @throws MalformedBytes when a part does not parse or its records are out of order
   */
  constructor(symbol, period, parts, provider) {
    this.#symbol = symbol;
    this.#provider = provider;
    this.#parts = parts;
    this.#entries = parts.map((_, part) => () => describeChunk(period, symbol, part));
    this.#columns = parts.map((bytes2) => parseChunkPart(bytes2, period * PERIOD_MS));
    const count = this.#columns.reduce((sum, column) => sum + column.count, 0);
    let timestamps = this.#columns[0].timestamps;
    if (this.#columns.length > 1) {
      timestamps = new Float64Array(count);
      let at = 0;
      for (const column of this.#columns) {
        timestamps.set(column.timestamps, at);
        at += column.count;
      }
    }
    for (let i = 1; i < count; i++) {
      if (timestamps[i] < timestamps[i - 1]) throw new MalformedBytes(`record ${i} is older than the one before`);
    }
    this.length = count;
    this.#timestamps = timestamps;
    this.#rows = new Array(count);
    this.weight = parts.reduce((sum, part) => sum + part.length, 0) + count * MIN_ROW_WEIGHT;
  }
  timestampAt(index) {
    return this.#timestamps[index];
  }
  rowAt(index) {
    let row = this.#rows[index];
    if (row === void 0) {
      let part = 0;
      let local = index;
      while (local >= this.#columns[part].count) local -= this.#columns[part++].count;
      const { fields } = this.#columns[part];
      const at = local * COLUMN_FIELDS;
      row = new Row(
        this.#symbol,
        this.#timestamps[index],
        this.#parts[part],
        fields[at],
        fields[at + 1],
        fields[at + 3],
        fields[at + 4],
        this.#entries[part],
        this.#provider,
        fields[at + 2] === 1 ? readCompactId : void 0
      );
      this.#rows[index] = row;
    }
    return row;
  }
};
function allRows(list) {
  const rows = new Array(list.length);
  for (let i = 0; i < list.length; i++) rows[i] = list.rowAt(i);
  return rows;
}
function firstAtOrAfter(list, timestamp) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = lo + hi >>> 1;
    if (list.timestampAt(mid) < timestamp) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
function firstAfter(list, timestamp) {
  return firstAtOrAfter(list, timestamp + 1);
}

// src/store/read-view.ts
var ROW_OVERHEAD = 256;
var COUNT_SAMPLES = 4;
var PROBE_LIMIT = 1024;
var DENSE_NOW_LIMIT = 48;
var PROBE_FIRST = 48;
var INDEX_BATCH = 256;
var ReadState = class {
  provider;
  #open = OpenArea.EMPTY;
  #tails;
  #recordsPerSymbol;
  #heads;
  #chunks;
  /** The one counter: bumped by every change to sealed data (a seal, or a write that failed). */
  #version = 0;
  /** True while a seal is between the database and memory. */
  #sealing = false;
  #symbols = [];
  /** The first and last hour holding any record (sealed or open); no query looks outside them. */
  #hours = EMPTY_SPAN;
  constructor(options) {
    this.provider = options.provider;
    this.#recordsPerSymbol = options.recordsPerSymbol;
    this.#tails = options.recordsPerSymbol > 0 ? new HotTails(options.recordsPerSymbol) : void 0;
    this.#heads = new Lru(options.headBytes, (heads) => 64 + (heads?.reduce((sum, row) => sum + row.valueLength + 64 + ROW_OVERHEAD, 0) ?? 0));
    this.#chunks = new Lru(options.chunkBytes, (chunk) => chunk.weight);
  }
  /** The open area as of the last commit. */
  get open() {
    return this.#open;
  }
  /** The hot tails, when on. */
  get tails() {
    return this.#tails;
  }
  /** Every symbol with a record, in UTF-8 byte order, as of the last commit. */
  get symbols() {
    return this.#symbols;
  }
  /** Starts from what the store found on disk when it opened: the replayed open area and the symbols. */
  load(open, symbols, sealedHours) {
    this.#open = open;
    this.#symbols = symbols;
    const openHours = open.periods();
    this.#hours = widen(widen(sealedHours, openHours[0]), openHours[openHours.length - 1]);
    this.#reset();
  }
  /**
   * A consistent view for one query: snapshot, open area and tails taken in
   * one synchronous step (rule 2).
   */
  view(db, sublevels) {
    return new ReadView(this, sublevels, db.snapshot(), this.#open, this.#symbols, this.#hours, this.#version, this.#sealing);
  }
  /**
   * Takes in a committed batch: its open rows, its rows for the tails, the
   * symbols it introduced (their tails start empty and complete) and, when
   * it introduced any, the new list of every symbol.
   */
  applyBatch(writes, rowsBySymbol2, newSymbols, symbols) {
    this.#open = this.#open.withWrites(writes);
    for (const write of writes) this.#hours = widen(this.#hours, write.period);
    this.#symbols = symbols;
    this.#tails?.apply(rowsBySymbol2, newSymbols);
  }
  /** A seal is about to go to the database: views captured from now on must not fill caches. */
  beginSeal() {
    this.#sealing = true;
  }
  /**
   * Takes in a committed seal step of `period`: the caches hold the new
   * chunks' heads and drop their old chunks. The open area keeps the hour's
   * rows until {@link ReadState.applySealEnd}; readers merge both.
   */
  applySealStep(period, heads) {
    for (const [symbol, rows] of heads) {
      const key = cacheKey(symbol, period);
      this.#chunks.delete(key);
      if (this.#heads.has(key)) this.#heads.set(key, rows);
    }
    this.#version++;
    this.#sealing = false;
  }
  /** Takes in the committed end of a seal: the hour's log entries are gone, and so are its open rows. */
  applySealEnd(period) {
    this.#open = this.#open.withoutPeriod(period);
  }
  /**
   * After a write whose outcome is unknown (LevelDB may have committed it):
   * caches of sealed data may no longer match the disk.
   */
  writeFailed() {
    this.#sealing = false;
    this.#reset();
  }
  #reset() {
    this.#version++;
    this.#heads.clear();
    this.#chunks.clear();
    this.#tails = this.#recordsPerSymbol > 0 ? new HotTails(this.#recordsPerSymbol) : void 0;
  }
  /** A cached entry, for a view captured at `version` (rule 3). */
  cachedHeads(key, version) {
    return version === this.#version ? this.#heads.get(key) : void 0;
  }
  cachedChunk(key, version) {
    return version === this.#version ? this.#chunks.get(key) : void 0;
  }
  /** Caches what a view read from its snapshot, if rule 4 allows. */
  installHeads(key, heads, version, sealing) {
    if (version === this.#version && !sealing && !this.#sealing) this.#heads.set(key, heads);
  }
  installChunk(key, chunk, version, sealing) {
    if (version === this.#version && !sealing && !this.#sealing) this.#chunks.set(key, chunk);
  }
};
var ReadView = class {
  #state;
  #levels;
  #snapshot;
  #open;
  #symbols;
  #hours;
  #version;
  #sealing;
  #pin;
  constructor(state, levels, snapshot, open, symbols, hours, version, sealing) {
    this.#hours = hours;
    this.#state = state;
    this.#levels = levels;
    this.#snapshot = snapshot;
    this.#pin = { snapshot };
    this.#open = open;
    this.#symbols = symbols;
    this.#version = version;
    this.#sealing = sealing;
  }
  async symbols() {
    return this.#symbols;
  }
  /**
   * The rows of a scan at once, when the hours to visit are few enough to
   * look up one by one (or the first {@link PROBE_FIRST} of them already
   * hold `limit` rows); otherwise `undefined`, and the engine calls `scan`.
   */
  scanNow(symbol, options) {
    const from = options.from ?? 0;
    const to = options.to ?? Number.MAX_SAFE_INTEGER;
    const [lo, hi] = this.#clamp(from, to);
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    if (limit === Number.POSITIVE_INFINITY && hi - lo + 1 > DENSE_NOW_LIMIT) return void 0;
    const whole = hi - lo + 1 <= PROBE_LIMIT;
    if (!whole && !options.reverse) return void 0;
    const found = [];
    const probes = whole ? hi - lo + 1 : PROBE_FIRST;
    for (let i = 0; i < probes && found.length < limit; i++) {
      const period = options.reverse ? hi - i : lo + i;
      this.#take(this.#periodRows(symbol, period, limit !== Number.POSITIVE_INFINITY), from, to, options.reverse, limit, found);
    }
    return whole || found.length >= limit ? found : void 0;
  }
  /** The rows of `symbol` in the window, a batch per hour, in order. */
  async *scan(symbol, options) {
    const from = options.from ?? 0;
    const to = options.to ?? Number.MAX_SAFE_INTEGER;
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    let taken = 0;
    const [lo, hi] = this.#clamp(from, to);
    for await (const period of this.#periods(symbol, lo, hi, options.reverse)) {
      const batch = this.#take(this.#periodRows(symbol, period, limit !== Number.POSITIVE_INFINITY), from, to, options.reverse, limit - taken, []);
      if (batch.length === 0) continue;
      taken += batch.length;
      yield batch;
      if (taken >= limit) return;
    }
  }
  /**
   * For grids on ten-minute lines (interval and origin multiples of ten minutes): the ten-minute heads
   * of the range from the chunks' heads entries and the open area, which the
   * engine samples further. The head of the bucket holding `to`, when it is
   * after `to`, is replaced by the latest row up to `to`. At once when the
   * range spans at most {@link PROBE_LIMIT} hours.
   */
  bucketHeads(symbol, range) {
    if (range.interval % HEAD_MS2 !== 0 || range.origin % HEAD_MS2 !== 0) return void 0;
    const [lo, hi] = this.#clamp(range.from, range.to);
    if (hi - lo + 1 > PROBE_LIMIT) return this.#headsByIndex(symbol, lo, hi, range);
    const rows = [];
    for (let period = lo; period <= hi; period++) this.#headsIn(symbol, period, range, rows);
    return rows;
  }
  /** Every row of `symbol` in `period`, ascending, as sealing merges them (nothing cached). */
  periodRows(symbol, period) {
    return allRows(this.#periodRows(symbol, period, false));
  }
  /**
   * About how many records `symbol` has in `from..to`, to weigh a query
   * before it runs: the record counts of up to {@link COUNT_SAMPLES} hours
   * spread over the window (a sealed hour's from its heads entry, an open
   * hour's rows counted), scaled to the hours the window covers.
   */
  estimateRecords(symbol, from, to) {
    const [lo, hi] = this.#clamp(from, to);
    if (lo > hi) return 0;
    const hours = hi - lo + 1;
    const samples = Math.min(hours, COUNT_SAMPLES);
    let counted = 0;
    for (let i = 0; i < samples; i++) {
      const period = lo + Math.floor((i + 0.5) * hours / samples);
      counted += (this.#headsOf(symbol, period)?.records ?? 0) + this.#open.rows(symbol, period).length;
    }
    const covered = Math.min(1, (to - from + 1) / (hours * PERIOD_MS));
    return Math.ceil(counted / samples * hours * covered);
  }
  /**
   * How many buckets of the range's grid surely hold a record of `symbol`:
   * those holding one of its ten-minute heads (each the latest record of
   * its ten minutes) inside `from..to`. For a grid on ten-minute lines that
   * is the range form's answer, give or take the bucket holding `to`; for a
   * finer one, a lower bound. `undefined` for a range over more than
   * {@link PROBE_LIMIT} hours, which this does not read.
   */
  bucketsSurelyHeld(symbol, { from, to, interval, origin }) {
    const [lo, hi] = this.#clamp(from, to);
    if (hi - lo + 1 > PROBE_LIMIT) return void 0;
    let buckets = 0;
    let last = Number.NEGATIVE_INFINITY;
    for (let period = lo; period <= hi; period++) {
      const sealed = this.#headsOf(symbol, period);
      const open = this.#open.rows(symbol, period);
      if (sealed === null && open.length === 0) continue;
      for (const head of combineHeads(sealed ?? [], open)) {
        if (head.timestamp < from || head.timestamp > to) continue;
        const bucket = Math.floor((head.timestamp - origin) / interval);
        if (bucket !== last) buckets++;
        last = bucket;
      }
    }
    return buckets;
  }
  /** Releases the snapshot. */
  async close() {
    await this.#snapshot.close();
  }
  async *#headsByIndex(symbol, lo, hi, range) {
    for await (const period of this.#periods(symbol, lo, hi, false)) {
      const rows = this.#headsIn(symbol, period, range, []);
      if (rows.length > 0) yield rows;
    }
  }
  /** The hours of `from..to` that can hold records: those of the window inside the store's first and last hour (empty when `lo > hi`). */
  #clamp(from, to) {
    return [Math.max(periodOf(from), this.#hours.first), Math.min(periodOf(to), this.#hours.last)];
  }
  /** Appends the ten-minute heads of one hour inside the range to `rows`, the edge at `to` resolved. */
  #headsIn(symbol, period, { from, to, interval, origin }, rows) {
    const sealed = this.#headsOf(symbol, period);
    const open = this.#open.rows(symbol, period);
    if (sealed === null && open.length === 0) return rows;
    const edgeBucket = Math.floor(to / HEAD_MS2);
    const before = rows.length;
    for (const head of combineHeads(sealed ?? [], open)) {
      if (head.timestamp > to && Math.floor(head.timestamp / HEAD_MS2) === edgeBucket) {
        const list = this.#periodRows(symbol, period, true);
        const index = firstAfter(list, to) - 1;
        if (index >= 0 && list.timestampAt(index) >= Math.max(from, edgeBucket * HEAD_MS2)) rows.push(list.rowAt(index));
      } else if (head.timestamp >= from && head.timestamp <= to) {
        rows.push(head);
      }
    }
    if (interval % PERIOD_MS === 0 && origin % PERIOD_MS === 0 && rows.length - before > 1) rows.splice(before, rows.length - before - 1);
    return rows;
  }
  /** Appends the rows of `list` inside `from..to`, in the scan's direction, until `found` holds `limit`. */
  #take(list, from, to, reverse, limit, found) {
    const start = firstAtOrAfter(list, from);
    const end = firstAfter(list, to);
    if (reverse) for (let i = end - 1; i >= start && found.length < limit; i--) found.push(list.rowAt(i));
    else for (let i = start; i < end && found.length < limit; i++) found.push(list.rowAt(i));
    return found;
  }
  /** Every row of `symbol` in `period`, ascending: the chunk's, with open rows merged in (replacing equal keys). */
  #periodRows(symbol, period, install) {
    const open = this.#open.rows(symbol, period);
    const sealed = this.#headsOf(symbol, period) === null ? void 0 : this.#chunk(symbol, period, install);
    if (sealed === void 0) return open.length === 0 ? RowArray.EMPTY : new RowArray(open);
    return open.length === 0 ? sealed : new RowArray(mergeRows(allRows(sealed), open));
  }
  /** Periods in `lo..hi` holding rows of `symbol` (sealed or open), in order. */
  async *#periods(symbol, lo, hi, reverse) {
    const open = this.#open.periodsOf(symbol).filter((period) => period >= lo && period <= hi);
    if (reverse) open.reverse();
    let next = 0;
    const before = (a, b) => reverse ? a > b : a < b;
    for await (const period of this.#sealedPeriods(symbol, lo, hi, reverse)) {
      while (next < open.length && before(open[next], period)) yield open[next++];
      if (open[next] === period) next++;
      yield period;
    }
    while (next < open.length) yield open[next++];
  }
  /** Periods in `lo..hi` with a chunk of `symbol`, in order: looked up one by one when few, else from the heads index. */
  async *#sealedPeriods(symbol, lo, hi, reverse) {
    const probe = hi - lo + 1 <= PROBE_LIMIT ? hi - lo + 1 : PROBE_FIRST;
    for (let i = 0; i < probe; i++) {
      const period = reverse ? hi - i : lo + i;
      if (this.#headsOf(symbol, period) !== null) yield period;
    }
    if (probe === hi - lo + 1) return;
    const range = headsRange(symbol, reverse ? lo : lo + probe, reverse ? hi - probe : hi);
    const iterator = this.#levels.heads.keys({ ...range, reverse, ...this.#pin });
    try {
      for (; ; ) {
        const keys = await iterator.nextv(INDEX_BATCH);
        if (keys.length === 0) return;
        for (const key of keys) yield readHeadsPeriod(key);
      }
    } finally {
      await iterator.close();
    }
  }
  /** The heads of the chunk of `symbol` in `period`, or `null` when there is none. */
  #headsOf(symbol, period) {
    const key = cacheKey(symbol, period);
    const cached = this.#state.cachedHeads(key, this.#version);
    if (cached !== void 0) return cached;
    const stored = this.#levels.heads.getSync(headsKey(symbol, period), this.#pin);
    const heads = stored === void 0 ? null : headRows(symbol, period, stored, this.#state.provider);
    this.#state.installHeads(key, heads, this.#version, this.#sealing);
    return heads;
  }
  /** The chunk of `symbol` in `period`, all parts. */
  #chunk(symbol, period, install) {
    const key = cacheKey(symbol, period);
    const cached = this.#state.cachedChunk(key, this.#version);
    if (cached !== void 0) return cached;
    const first = this.#part(symbol, period, 0);
    let chunk;
    try {
      const parts = [first];
      for (let part = 1, count = readPartCount(first); part < count; part++) parts.push(this.#part(symbol, period, part));
      chunk = new SealedChunk(symbol, period, parts, this.#state.provider);
    } catch (err) {
      if (err instanceof PriceStoreError) throw err;
      throw corrupt2(describeChunk(period, symbol, 0), err);
    }
    if (install) this.#state.installChunk(key, chunk, this.#version, this.#sealing);
    return chunk;
  }
  #part(symbol, period, part) {
    const bytes2 = this.#levels.chunks.getSync(chunkKey(period, symbol, part), this.#pin);
    if (bytes2 === void 0) {
      const entry = describeChunk(period, symbol, part);
      throw new PriceStoreError("PRICE_CORRUPT_VALUE", `${entry} is missing though the heads index lists it`, { details: { key: entry } });
    }
    return bytes2;
  }
};
var EMPTY_SPAN = Object.freeze({ first: Number.POSITIVE_INFINITY, last: Number.NEGATIVE_INFINITY });
function widen(span2, hour) {
  if (hour === void 0 || hour >= span2.first && hour <= span2.last) return span2;
  return { first: Math.min(span2.first, hour), last: Math.max(span2.last, hour) };
}
function combineHeads(sealed, open) {
  if (open.length === 0) return sealed;
  const byBucket = /* @__PURE__ */ new Map();
  for (const head of sealed) byBucket.set(Math.floor(head.timestamp / HEAD_MS2), head);
  for (const row of open) {
    const bucket = Math.floor(row.timestamp / HEAD_MS2);
    const held = byBucket.get(bucket);
    if (held === void 0 || compareRows(row, held) >= 0) byBucket.set(bucket, row);
  }
  return [...byBucket.entries()].sort((a, b) => a[0] - b[0]).map(([, row]) => row);
}
function cacheKey(symbol, period) {
  return `${period}:${symbol}`;
}
function corrupt2(entry, err) {
  const reason = err instanceof Error ? err.message : String(err);
  return new PriceStoreError("PRICE_CORRUPT_VALUE", `${entry} cannot be decoded: ${reason}`, { cause: err, details: { key: entry } });
}

// src/store/root-batch.ts
function prefixOf(sublevel) {
  return sublevel.prefixKey(new Uint8Array(0), "view");
}
var RootBatch = class {
  #operations = [];
  get length() {
    return this.#operations.length;
  }
  put(prefix, key, value) {
    this.#operations.push({ type: "put", key: prefixed(prefix, key), value, keyEncoding: "view", valueEncoding: "view" });
  }
  del(prefix, key) {
    this.#operations.push({ type: "del", key: prefixed(prefix, key), keyEncoding: "view" });
  }
  /** Writes every operation atomically; `sync` is classic-level's fsync switch, ignored elsewhere. */
  async write(db, sync) {
    if (sync) await db.batch(this.#operations, { sync });
    else await db.batch(this.#operations);
  }
};
function prefixed(prefix, key) {
  const full = new Uint8Array(prefix.length + key.length);
  full.set(prefix, 0);
  full.set(key, prefix.length);
  return full;
}

// src/store/storage-errors.ts
function toStorageError(err, action) {
  if (isPriceStoreError(err)) return err;
  const codes = levelCodes(err);
  if (codes.has("LEVEL_LOCKED")) {
    return new PriceStoreError("PRICE_LOCKED", `cannot ${action}: the database is in use by another process or store`, { cause: err });
  }
  if (codes.has("LEVEL_DATABASE_NOT_OPEN") || codes.has("LEVEL_ITERATOR_NOT_OPEN") || codes.has("LEVEL_SNAPSHOT_NOT_OPEN")) {
    return new PriceStoreError("PRICE_NOT_OPEN", `cannot ${action}: the store is not open`, { cause: err });
  }
  const reason = err instanceof Error ? err.message : String(err);
  return new PriceStoreError("PRICE_STORAGE_ERROR", `cannot ${action}: ${reason}`, { cause: err });
}
function levelCodes(err) {
  const codes = /* @__PURE__ */ new Set();
  for (let current = err, depth = 0; typeof current === "object" && current !== null && depth < 5; depth++) {
    const code = current.code;
    if (typeof code === "string") codes.add(code);
    current = current.cause;
  }
  return codes;
}

// src/store/sealer.ts
var SEAL_GRACE_MS = HEAD_MS2;
var SLICE_MS = 40;
var STEP_BYTES = 4 * 1024 * 1024;
var Sealer = class {
  #context;
  #task;
  /** The newest timestamp written: hours that ended well before it are due. */
  horizon = 0;
  constructor(context) {
    this.#context = context;
  }
  /**
   * Seals due hours for up to one slice of time. Returns true when due work
   * is left, so the caller queues another turn after the writes waiting now.
   * @throws PriceStoreError when a step's write fails (its rows stay open)
   */
  async runDue() {
    const deadline = performance.now() + SLICE_MS;
    while (this.#task !== void 0 || this.#duePeriod() !== void 0) {
      if (performance.now() > deadline) return true;
      await this.#step();
    }
    return false;
  }
  /** Seals every open hour, due or not (when the store closes). */
  async runAll() {
    for (; ; ) {
      if (this.#task === void 0) {
        const oldest = this.#context.state.open.periods()[0];
        if (oldest === void 0) return;
        this.#begin(oldest);
      }
      await this.#step();
    }
  }
  /** The oldest open hour if it is due: over for {@link SEAL_GRACE_MS}, or the open area is over its budget. */
  #duePeriod() {
    const open = this.#context.state.open;
    const oldest = open.periods()[0];
    if (oldest === void 0) return void 0;
    return (oldest + 1) * PERIOD_MS + SEAL_GRACE_MS <= this.horizon || open.bytes > this.#context.openBytes ? oldest : void 0;
  }
  #begin(period) {
    const held = this.#context.state.open.period(period);
    this.#task = { period, symbols: [...held?.symbols.keys() ?? []].reverse(), logEntries: held?.logKeys.length ?? 0 };
    return this.#task;
  }
  /** One atomic write: chunks of some symbols of the hour, or, once all are written, the deletion of its log entries. */
  async #step() {
    const { state, db, levels, prefixes, provider } = this.#context;
    const task = this.#task ?? this.#begin(this.#duePeriod());
    const held = state.open.period(task.period);
    if (held === void 0) {
      this.#task = void 0;
      return;
    }
    const batch = new RootBatch();
    if (task.symbols.length === 0) {
      if (held.logKeys.length !== task.logEntries) {
        this.#begin(task.period);
        return;
      }
      for (const key of held.logKeys) batch.del(prefixes.log, key);
      await this.#commit(batch, () => state.applySealEnd(task.period));
      this.#task = void 0;
      return;
    }
    const heads = /* @__PURE__ */ new Map();
    const view = state.view(db, levels);
    try {
      let bytes2 = 0;
      while (bytes2 < STEP_BYTES && task.symbols.length > 0) {
        const symbol = task.symbols.pop();
        bytes2 += writeChunk(batch, view, task.period, symbol, provider, prefixes, heads);
      }
    } finally {
      await view.close();
    }
    state.beginSeal();
    await this.#commit(batch, () => state.applySealStep(task.period, heads));
  }
  async #commit(batch, apply) {
    try {
      await batch.write(this.#context.db, this.#context.sync);
    } catch (err) {
      this.#task = void 0;
      this.#context.state.writeFailed();
      throw toStorageError(err, "seal an hour of records");
    }
    apply();
  }
};
function writeChunk(batch, view, period, symbol, provider, prefixes, heads) {
  const records = view.periodRows(symbol, period).map(toChunkRecord);
  const parts = Math.ceil(records.length / MAX_PART_RECORDS);
  let bytes2 = 0;
  for (let part = 0; part < parts; part++) {
    const value = encodeChunkPart(period * PERIOD_MS, parts, records.slice(part * MAX_PART_RECORDS, (part + 1) * MAX_PART_RECORDS));
    batch.put(prefixes.chunks, chunkKey(period, symbol, part), value);
    bytes2 += value.length;
  }
  const entry = headsEntryOf(period, records);
  batch.put(prefixes.heads, headsKey(symbol, period), entry);
  heads.set(symbol, headRows(symbol, period, entry, provider));
  return bytes2;
}
function toChunkRecord(row) {
  return { timestamp: row.timestamp, idBytes: row.idIsUtf8 ? row.idBytes : Buffer.from(row.id, "utf8"), value: row.value };
}

// src/types.ts
var DEFAULT_LIMITS = Object.freeze({
  maxLimit: 3e3,
  maxSymbols: 1e3,
  maxRangePoints: 1e4
});

// src/store/store-options.ts
var DEFAULT_RECORDS_PER_SYMBOL = 128;
var DEFAULT_HEAD_BYTES = 64 * 1024 * 1024;
var DEFAULT_CHUNK_BYTES = 32 * 1024 * 1024;
var DEFAULT_OPEN_BYTES = 64 * 1024 * 1024;
var DEFAULT_MAX_OPEN_FILES = 100;
function resolveOptions(options) {
  if (typeof options !== "object" || options === null) throw invalid2("options", options, "must be an object");
  const { provider, limits = {}, sync = false } = options;
  if (typeof provider !== "object" || provider === null) throw invalid2("provider", provider, "must be an object { name, id, publicKey }");
  for (const field of ["name", "id", "publicKey"]) {
    const value = provider[field];
    if (typeof value !== "string" || value.length === 0) throw invalid2(`provider.${field}`, value, "must be a non-empty string");
  }
  const { aliases } = provider;
  if (aliases !== void 0 && !(Array.isArray(aliases) && aliases.every((alias) => typeof alias === "string" && alias.length > 0))) {
    throw invalid2("provider.aliases", aliases, "must be an array of non-empty strings");
  }
  if (typeof limits !== "object" || limits === null) throw invalid2("limits", limits, "must be an object");
  const resolvedLimits = { ...DEFAULT_LIMITS };
  for (const field of ["maxLimit", "maxSymbols", "maxRangePoints"]) {
    const value = limits[field];
    if (value === void 0) continue;
    if (!Number.isSafeInteger(value) || value < 1) throw invalid2(`limits.${field}`, value, "must be an integer >= 1");
    resolvedLimits[field] = value;
  }
  if (typeof sync !== "boolean") throw invalid2("sync", sync, "must be a boolean");
  const { cache = {} } = options;
  if (typeof cache !== "object" || cache === null) throw invalid2("cache", cache, "must be an object");
  const { recordsPerSymbol = DEFAULT_RECORDS_PER_SYMBOL, headBytes = DEFAULT_HEAD_BYTES, chunkBytes = DEFAULT_CHUNK_BYTES } = cache;
  for (const [field, value] of [["recordsPerSymbol", recordsPerSymbol], ["headBytes", headBytes], ["chunkBytes", chunkBytes]]) {
    if (!Number.isSafeInteger(value) || value < 0) throw invalid2(`cache.${field}`, value, "must be an integer >= 0");
  }
  const { openBytes = DEFAULT_OPEN_BYTES } = options;
  if (!Number.isSafeInteger(openBytes) || openBytes < 0) throw invalid2("openBytes", openBytes, "must be an integer >= 0");
  const { maxOpenFiles = DEFAULT_MAX_OPEN_FILES } = options;
  if (!Number.isSafeInteger(maxOpenFiles) || maxOpenFiles < 74 || maxOpenFiles > 5e4) {
    throw invalid2("maxOpenFiles", maxOpenFiles, "must be an integer from 74 to 50000");
  }
  return Object.freeze({
    provider: Object.freeze({ name: provider.name, id: provider.id, publicKey: provider.publicKey, ...aliases && { aliases: Object.freeze([...aliases]) } }),
    limits: Object.freeze(resolvedLimits),
    sync,
    recordsPerSymbol,
    headBytes,
    chunkBytes,
    openBytes,
    maxOpenFiles
  });
}
function invalid2(field, value, rule) {
  return new PriceStoreError("PRICE_INVALID_OPTIONS", `option ${field} ${rule} (got ${describeValue(value)})`, {
    details: { field }
  });
}

// src/store/price-store.ts
var asyncDispose = Symbol.asyncDispose ?? /* @__PURE__ */ Symbol("Symbol.asyncDispose");
var EMPTY = Buffer.alloc(0);
var TAIL_LOAD_CONCURRENCY = 64;
var CLASSIC_LEVEL_OPTIONS = {
  // A larger memtable halves LevelDB's write stalls on bulk ingest (PERF-NOTES: 55k -> 115k records/s).
  writeBufferSize: 64 * 1024 * 1024
};
var PriceStore = class _PriceStore {
  #db;
  #options;
  #levels;
  #meta;
  /** Each sublevel's key prefix in the root database, for writing batches there directly. */
  #prefixes;
  /** What queries read from memory, and the rule for mixing it with the disk. */
  #state;
  /** Symbols already in the symbol index, so a batch only adds new ones. */
  #knownSymbols = /* @__PURE__ */ new Set();
  #status = "closed";
  /** Writes and seals run one after another, so index bookkeeping never races. */
  #writeQueue = Promise.resolve();
  /** The next log entry's sequence number. */
  #sequence = 0;
  /** Moves closed hours from the log into chunks, in the write queue. */
  #sealer;
  /**
   * Wraps any abstract-level database (e.g. `new MemoryLevel()`); call
   * {@link PriceStore.open | open()} before use. The store keeps its data in
   * sublevels with their own encodings, so the database can have any options.
   * @throws PriceStoreError `PRICE_INVALID_OPTIONS`
   */
  constructor(db, options) {
    this.#options = resolveOptions(options);
    this.#db = db;
    if (db.supports.getSync !== true || db.supports.explicitSnapshots !== true) {
      throw new PriceStoreError("PRICE_INVALID_OPTIONS", "the database must support getSync() and explicit snapshots (abstract-level 3, e.g. classic-level or memory-level)", {
        details: { field: "db" }
      });
    }
    try {
      const bytes2 = (name) => db.sublevel(name, { keyEncoding: "view", valueEncoding: "view" });
      this.#levels = { log: bytes2("l"), chunks: bytes2("c"), heads: bytes2("h"), symbols: bytes2("s") };
      this.#meta = db.sublevel("m", { keyEncoding: "utf8", valueEncoding: "utf8" });
      const { log, chunks, heads, symbols } = this.#levels;
      this.#prefixes = { log: prefixOf(log), chunks: prefixOf(chunks), heads: prefixOf(heads), symbols: prefixOf(symbols) };
    } catch (err) {
      throw new PriceStoreError(
        "PRICE_INVALID_OPTIONS",
        'the database cannot hold binary keys and values (e.g. memory-level with storeEncoding "utf8"); use one that stores buffers or views',
        { cause: err, details: { field: "db" } }
      );
    }
    this.#state = new ReadState({
      provider: this.#options.provider,
      recordsPerSymbol: this.#options.recordsPerSymbol,
      headBytes: this.#options.headBytes,
      chunkBytes: this.#options.chunkBytes
    });
    this.#sealer = new Sealer({
      db,
      levels: this.#levels,
      state: this.#state,
      provider: this.#options.provider,
      prefixes: this.#prefixes,
      sync: this.#options.sync,
      openBytes: this.#options.openBytes
    });
  }
  /**
   * Opens a store on a directory (LevelDB via classic-level, created when
   * missing) or on an abstract-level database.
   * @throws PriceStoreError `PRICE_LOCKED` when another process holds the directory,
   *   `PRICE_UNSUPPORTED_FORMAT`, `PRICE_INVALID_OPTIONS`, `PRICE_STORAGE_ERROR`
   */
  static async open(location, options) {
    const { maxOpenFiles } = resolveOptions(options);
    const db = typeof location === "string" ? new ClassicLevel(location, { ...CLASSIC_LEVEL_OPTIONS, maxOpenFiles }) : location;
    const store2 = new _PriceStore(db, options);
    await store2.open();
    return store2;
  }
  /** The provider this store serves. */
  get provider() {
    return this.#options.provider;
  }
  /** The query caps in force. */
  get limits() {
    return this.#options.limits;
  }
  /** Where the store is in its life: queries and writes need `'open'`. */
  get status() {
    return this.#status;
  }
  /**
   * Opens the database, checks its format version and provider (recording
   * them in a new database) and replays the unsealed records of its log.
   * Opening an open store does nothing.
   * @throws PriceStoreError `PRICE_LOCKED`, `PRICE_UNSUPPORTED_FORMAT`, `PRICE_PROVIDER_MISMATCH`, `PRICE_STORAGE_ERROR`
   */
  async open() {
    if (this.#status === "open") return;
    if (this.#status !== "closed") throw new PriceStoreError("PRICE_NOT_OPEN", `cannot open a store that is ${this.#status}`);
    this.#status = "opening";
    try {
      await this.#db.open({ createIfMissing: true });
      await Promise.all([...Object.values(this.#levels), this.#meta].map((sublevel) => sublevel.open()));
      await checkFormat(this.#meta, this.#db, this.#options.provider);
      this.#knownSymbols.clear();
      for (const key of await this.#levels.symbols.keys().all()) this.#knownSymbols.add(Buffer.from(key).toString("utf8"));
      this.#state.load(await this.#replayLog(), [...this.#knownSymbols].sort(compareIds), await this.#sealedHours());
      this.#status = "open";
      this.#enqueueSeal();
    } catch (err) {
      this.#status = "closed";
      await this.#db.close().catch(() => {
      });
      const coded = toStorageError(err, "open the store");
      throw coded.code === "PRICE_NOT_OPEN" ? new PriceStoreError("PRICE_STORAGE_ERROR", "cannot open the store: the database failed to open", { cause: err }) : coded;
    }
  }
  /**
   * Waits for pending writes, seals every open hour (so a closed store is
   * all chunks and reopens without replaying its log), then closes the
   * database. Closing a closed store does nothing.
   */
  async close() {
    if (this.#status === "closed" || this.#status === "closing") return;
    this.#status = "closing";
    try {
      await this.#writeQueue;
      await this.#sealer.runAll().catch(() => {
      });
      await this.#db.close();
    } finally {
      this.#status = "closed";
    }
  }
  /**
   * Closes the store (as {@link PriceStore.close}) when a scope declared
   * with `await using` ends, so a store cannot be left open by an early
   * return or a throw:
   * @example
   * await using store = await PriceStore.open('./data/prices', { provider })
   */
  async [asyncDispose]() {
    await this.close();
  }
  /**
   * Writes one record. See {@link PriceStore.putMany}.
   * @throws PriceStoreError `PRICE_INVALID_RECORD`, `PRICE_NOT_OPEN`, `PRICE_STORAGE_ERROR`
   */
  async put(record) {
    await this.putMany([record]);
  }
  /**
   * Validates and writes a batch of records atomically: if any record is
   * bad, nothing is written. A record with the same symbol, timestamp and id
   * as a stored one replaces it. Resolves with the number of records written.
   * The parameter is typed for TypeScript callers; the same rules are
   * checked at run time, so untyped input (JSON) may be passed as it is.
   * An error thrown by the iterable itself passes through unchanged.
   * @throws PriceStoreError `PRICE_INVALID_RECORD` (with `details.index` and
   *   `details.field`, or `details.parameter` `records` when the batch is not
   *   an iterable), `PRICE_NOT_OPEN`, `PRICE_STORAGE_ERROR`
   */
  async putMany(records) {
    this.#assertOpen();
    const stored = validateBatch(records, this.#options.provider);
    if (stored.length === 0) return 0;
    const write = this.#writeQueue.then(() => this.#writeBatch(stored));
    this.#writeQueue = write.catch(() => {
    });
    this.#enqueueSeal();
    return write;
  }
  /**
   * The latest `limit` records of a symbol, newest first; with `to` (and/or
   * `from`), the records as of that time. An unknown symbol gives `[]`.
   * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_NOT_OPEN`,
   *   `PRICE_ABORTED` (`options.signal`)
   */
  async latest(symbol, options = {}) {
    return this.#answer(this.#plan(toLatestQuery(symbol, options, this.limits)), signalOf(options));
  }
  /**
   * The latest record of each symbol (every symbol in the store when
   * `symbols` is left out), within the optional window, keyed by symbol.
   * Symbols with no record in the window are left out. All symbols are read
   * from one snapshot.
   * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_NOT_OPEN`,
   *   `PRICE_ABORTED` (`options.signal`)
   */
  async several(symbols, options = {}) {
    return this.#answer(this.#plan(toSeveralQuery(symbols, options, this.limits)), signalOf(options));
  }
  async range(symbol, options) {
    return this.#answer(this.#plan(toRangeQuery(symbol, options, this.limits)), signalOf(options));
  }
  /**
   * Candles of `symbol` over `from..to`: per `interval` bucket the open,
   * high, low and close, each naming its record, and the count; gap-filled
   * with `fill: 'prev'`. Then `offset` and `limit`; refuses answers over
   * `maxRangePoints`.
   * @throws PriceStoreError as {@link PriceStore.range}
   * @example
   * await store.candles('BTC', { from, to, interval: 3_600_000 }) // hourly candles
   */
  async candles(symbol, options) {
    return this.#answer(this.#plan(toCandlesQuery(symbol, options, this.limits)), signalOf(options));
  }
  /**
   * The time-weighted average value of each symbol (every symbol when
   * `symbols` is left out) over `from..to`, keyed by symbol, the record in
   * force at `from` carried in; symbols with no record in force are left out.
   * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_NOT_OPEN`,
   *   `PRICE_ABORTED` (`options.signal`)
   */
  async twap(symbols, options) {
    return this.#answer(this.#plan(toTwapQuery(symbols, options, this.limits)), signalOf(options));
  }
  rangeStream(symbol, options) {
    return this.#stream(toRangeQuery(symbol, streamOptions(options), this.limits), signalOf(options), "stream a price range");
  }
  /**
   * The candles form as a stream, without the `maxRangePoints` cap, read
   * from one consistent view; `signal` as for {@link PriceStore.rangeStream}.
   * @throws PriceStoreError (synchronously) for bad arguments or a closed store
   */
  candleStream(symbol, options) {
    return this.#stream(toCandlesQuery(symbol, streamOptions(options), this.limits), signalOf(options), "stream candles");
  }
  /**
   * Answers a `GET /prices` parameter set exactly as the HTTP service does:
   * an array for single-symbol forms, an object keyed by symbol otherwise.
   * @throws PriceStoreError with a `PRICE_INVALID_*`, `PRICE_UNSUPPORTED_PROVIDER`,
   *   `PRICE_RANGE_TOO_LARGE`, `PRICE_NOT_OPEN` or `PRICE_ABORTED` (`options.signal`) code
   */
  async query(params, options = {}) {
    return this.#answer(this.plan(params), signalOf(options));
  }
  /**
   * Answers a `GET /prices` parameter set, or a plan made by
   * {@link PriceStore.plan}, as {@link PriceStore.query} does, but with the
   * answer's form named: switch on `form` and `answer` has its exact type.
   * @throws PriceStoreError as {@link PriceStore.query}
   * @example
   * const result = await store.ask(new URLSearchParams(search))
   * if (result.form === 'candles') draw(result.answer) // Candle[]
   */
  async ask(request, options = {}) {
    const plan = isPlanShaped(request) ? request : this.plan(request);
    checkPlan(plan);
    return typedAnswer(plan.query, await this.#answer(plan, signalOf(options)));
  }
  /**
   * Compiles a `GET /prices` parameter set into a plan without reading
   * anything: the form, the reads it makes and its cost (`heavy`), which a
   * host can act on before running it with {@link PriceStore.run}.
   * @throws PriceStoreError with a `PRICE_INVALID_*` or `PRICE_UNSUPPORTED_PROVIDER` code
   */
  plan(params) {
    return this.#plan(parseQuery(params, this.#options));
  }
  /**
   * Answers a plan made by {@link PriceStore.plan}.
   * @throws PriceStoreError `PRICE_INVALID_QUERY` for anything else, and as {@link PriceStore.query}
   */
  async run(plan, options = {}) {
    checkPlan(plan);
    return this.#answer(plan, signalOf(options));
  }
  /**
   * The work a plan will do, in records: 1 for each record it returns and
   * 1/8 for each it only reads, with the records a range covers estimated
   * from the store's own counts (a few heads entries, no records read).
   * The HTTP service admits queries by it. A range whose answer is sure to
   * pass the cap is refused here, before any record is read.
   * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE`, `PRICE_INVALID_QUERY` for anything but a plan, `PRICE_NOT_OPEN`
   * @example
   * const plan = store.plan(params)
   * if (store.cost(plan) > 5_000) queueForLater(plan)
   */
  cost(plan) {
    checkPlan(plan);
    this.#assertOpen();
    const kind = plan.query.kind;
    if (kind === "latest" || kind === "several") return costOf(plan, { symbols: this.#state.symbols, records: () => 0 });
    const view = this.#view();
    try {
      return costOf(plan, {
        symbols: this.#state.symbols,
        records: (symbol, from, to) => view.estimateRecords(symbol, from, to),
        bucketsSurelyHeld: (symbol, grid) => view.bucketsSurelyHeld(symbol, grid)
      });
    } finally {
      void view.close().catch(() => {
      });
    }
  }
  /**
   * Answers a plan as {@link PriceStore.run} does, except that the latest-N
   * and range forms give a {@link DeferredAnswer}: their records are chosen,
   * counted and checked against the cap, then decoded only as they are read.
   * The HTTP service streams large answers from it, so neither the decoded
   * records nor their JSON are ever whole in memory.
   * @throws PriceStoreError as {@link PriceStore.run}; reading an item may throw `PRICE_CORRUPT_VALUE`
   */
  async runDeferred(plan, options = {}) {
    checkPlan(plan);
    return this.#answer(plan, signalOf(options), executePlanDeferred);
  }
  /** Every symbol with at least one record, in UTF-8 byte order. */
  async symbols() {
    this.#assertOpen();
    return [...this.#state.symbols];
  }
  // No open check here: close() waits for queued writes, which still run while it is 'closing'.
  async #writeBatch(records) {
    const entries = /* @__PURE__ */ new Map();
    const newSymbols = /* @__PURE__ */ new Set();
    let horizon = this.#sealer.horizon;
    for (const record of records) {
      const period = periodOf(record.timestamp);
      let entry = entries.get(period);
      if (entry === void 0) entries.set(period, entry = new LogEntryWriter());
      entry.add(record.symbol, record.timestamp, record.id, (writer) => writeValue(writer, record));
      if (!this.#knownSymbols.has(record.symbol)) newSymbols.add(record.symbol);
      if (record.timestamp > horizon) horizon = record.timestamp;
    }
    const batch = new RootBatch();
    const writes = [];
    for (const [period, entry] of entries) {
      const sequence = this.#sequence++;
      const key = logKey(period, sequence);
      const { bytes: bytes2, places } = entry.finish();
      batch.put(this.#prefixes.log, key, bytes2);
      writes.push(this.#openWrite(period, sequence, key, bytes2, places));
    }
    for (const symbol of newSymbols) batch.put(this.#prefixes.symbols, symbolKey(symbol), EMPTY);
    try {
      await batch.write(this.#db, this.#options.sync);
    } catch (err) {
      this.#state.writeFailed();
      throw toStorageError(err, "write the records");
    }
    for (const symbol of newSymbols) this.#knownSymbols.add(symbol);
    const symbols = newSymbols.size > 0 ? [...this.#knownSymbols].sort(compareIds) : this.#state.symbols;
    this.#state.applyBatch(writes, rowsBySymbol(writes), newSymbols, symbols);
    this.#sealer.horizon = horizon;
    return records.length;
  }
  /** One log entry's records as open rows (views into the entry's bytes), by symbol; parsed when `places` are not known. */
  #openWrite(period, sequence, key, entry, places) {
    const rows = /* @__PURE__ */ new Map();
    const name = () => describeLog(period, sequence);
    const add = (symbol, timestamp, idStart, idEnd, valueStart, valueEnd) => {
      let list = rows.get(symbol);
      if (list === void 0) rows.set(symbol, list = []);
      list.push(new Row(symbol, timestamp, entry, idStart, idEnd, valueStart, valueEnd, name, this.#options.provider));
    };
    if (places === void 0) readLogEntry(entry, add);
    else for (const place of places) add(place.symbol, place.timestamp, place.idStart, place.idEnd, place.valueStart, place.valueEnd);
    return { period, logKey: key, bytes: entry.length, rows };
  }
  /** The first and last hour with a chunk: chunk keys start with the hour, so these are the first and last keys. */
  async #sealedHours() {
    const [first] = await this.#levels.chunks.keys({ limit: 1 }).all();
    const [last] = await this.#levels.chunks.keys({ limit: 1, reverse: true }).all();
    if (first === void 0 || last === void 0) return { first: Number.POSITIVE_INFINITY, last: Number.NEGATIVE_INFINITY };
    return { first: readChunkPeriod(first), last: readChunkPeriod(last) };
  }
  /** Reads the log into a new open area: the records written and not yet sealed, in commit order. */
  async #replayLog() {
    const writes = [];
    this.#sequence = 0;
    this.#sealer.horizon = 0;
    for await (const [key, entry] of this.#levels.log.iterator()) {
      let write;
      try {
        const { period, sequence } = readLogKey(key);
        write = this.#openWrite(period, sequence, Buffer.from(key), Buffer.from(entry));
        this.#sequence = Math.max(this.#sequence, sequence + 1);
      } catch (err) {
        const name = key.length === 12 ? describeLog(readLogKey(key).period, readLogKey(key).sequence) : `log entry 0x${Buffer.from(key).toString("hex")}`;
        throw new PriceStoreError("PRICE_CORRUPT_VALUE", `${name} cannot be decoded: ${err.message}`, { cause: err, details: { key: name } });
      }
      writes.push(write);
      for (const rows of write.rows.values()) for (const row of rows) this.#sealer.horizon = Math.max(this.#sealer.horizon, row.timestamp);
    }
    return OpenArea.EMPTY.withWrites(writes);
  }
  /** Queues a turn of sealing after the writes queued so far. */
  #enqueueSeal() {
    this.#writeQueue = this.#writeQueue.then(async () => {
      if (this.#status !== "closed" && await this.#sealer.runDue()) this.#enqueueSeal();
    }).catch(() => {
    });
  }
  #plan(query) {
    return planQuery(query, this.limits.maxRangePoints);
  }
  /**
   * Answers a plan from the hot tails when they hold every row its reads
   * need (loading missing tails first), otherwise from a view.
   */
  async #answer(plan, signal, execute = executePlan) {
    this.#assertOpen();
    throwIfAborted(signal);
    const options = signal === void 0 ? {} : { signal };
    const tails = this.#state.tails;
    if (tails !== void 0) {
      const symbols = plan.symbols === "all" ? this.#state.symbols : plan.symbols;
      let captured = tails.capture(symbols, this.#knownSymbols);
      if (captured === void 0) {
        await this.#loadTails(tails, symbols, signal);
        captured = tails.capture(symbols, this.#knownSymbols);
      }
      if (captured?.canAnswer(plan)) return execute(plan, captured, options);
    }
    return this.#read("answer the query", (view) => execute(plan, view, options));
  }
  /**
   * A bucketed form as a stream over one view (a snapshot and the open area)
   * for its whole life; the view is taken at the first pull and released
   * when the stream ends, is left, fails or its signal aborts.
   */
  #stream(query, signal, action) {
    const plan = this.#plan(query);
    this.#assertOpen();
    const store2 = this;
    async function* items() {
      const view = store2.#view();
      try {
        yield* streamBuckets(plan, view, signal === void 0 ? {} : { signal });
      } catch (err) {
        throw toStorageError(err, action);
      } finally {
        await view.close();
      }
    }
    return { [Symbol.asyncIterator]: () => signal === void 0 ? items() : releaseOnAbort(items(), signal) };
  }
  async #loadTails(tails, symbols, signal) {
    const missing2 = symbols.filter((symbol) => this.#knownSymbols.has(symbol) && !tails.has(symbol));
    const versions = new Map(missing2.map((symbol) => [symbol, tails.version(symbol)]));
    await this.#read("load the newest records", async (view) => {
      for (let start = 0; start < missing2.length; start += TAIL_LOAD_CONCURRENCY) {
        throwIfAborted(signal);
        await Promise.all(missing2.slice(start, start + TAIL_LOAD_CONCURRENCY).map(async (symbol) => {
          const version = versions.get(symbol);
          const rows = [];
          try {
            for await (const batch of view.scan(symbol, { reverse: true, limit: tails.perSymbol })) rows.push(...batch);
          } catch (err) {
            if (isPriceStoreError(err, "PRICE_CORRUPT_VALUE")) return;
            throw err;
          }
          tails.install(symbol, version, rows);
        }));
      }
    });
  }
  /** Runs a read with one view: a snapshot and the open area, taken together. */
  async #read(action, run) {
    const view = this.#view();
    try {
      return await run(view);
    } catch (err) {
      throw toStorageError(err, action);
    } finally {
      await view.close();
    }
  }
  #view() {
    this.#assertOpen();
    return this.#state.view(this.#db, this.#levels);
  }
  #assertOpen() {
    if (this.#status !== "open") throw new PriceStoreError("PRICE_NOT_OPEN", `the store is ${this.#status}, not open`);
  }
};
function rowsBySymbol(writes) {
  const bySymbol = /* @__PURE__ */ new Map();
  for (const write of writes) {
    for (const [symbol, rows] of write.rows) {
      const list = bySymbol.get(symbol);
      if (list === void 0) bySymbol.set(symbol, [...rows]);
      else list.push(...rows);
    }
  }
  return bySymbol;
}
function isPlanShaped(request) {
  if (request instanceof URLSearchParams) return false;
  const query = request.query;
  return typeof query === "object" && query !== null && !Array.isArray(query);
}
function streamOptions(options) {
  if (typeof options !== "object" || options === null) return options;
  const { offset: _offset, limit: _limit, ...rest } = options;
  return rest;
}

// src/adapters/http/chart-page.ts
var CHART_SCRIPT_PATH = "/page/chart.js";
var PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>price-store chart</title>
<link rel="icon" href="data:,">
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 0; color: #1f2937; background: #fff; }
  header { display: flex; flex-wrap: wrap; gap: 0.75rem 1.5rem; align-items: center; padding: 0.75rem 1rem; border-bottom: 1px solid #e5e7eb; }
  h1 { font-size: 1.1rem; margin: 0; }
  form { display: flex; gap: 0.5rem 1rem; flex-wrap: wrap; align-items: center; }
  label { font-weight: 600; }
  select { font: inherit; padding: 0.2rem 0.4rem; }
  #latest { margin: 0; font-variant-numeric: tabular-nums; }
  main { padding: 0.5rem 1rem 1rem; }
  #chart { height: min(70vh, 560px); min-height: 280px; }
  #status { margin: 0.5rem 0 0; color: #4b5563; }
  #status.error { color: #b91c1c; }
</style>
<script src="${CHART_SCRIPT_PATH}" defer></script>
</head>
<body>
<header>
  <h1>price-store</h1>
  <form id="controls">
    <label for="symbol">Symbol</label>
    <select id="symbol" name="symbol" disabled><option>loading\u2026</option></select>
    <label for="window">Window</label>
    <select id="window" name="window">
      <option value="3600" data-resolution="1">1 hour, 1-minute bars</option>
      <option value="21600" data-resolution="5" selected>6 hours, 5-minute bars</option>
      <option value="86400" data-resolution="15">1 day, 15-minute bars</option>
      <option value="172800" data-resolution="30">2 days, 30-minute bars</option>
      <option value="604800" data-resolution="60">7 days, 1-hour bars</option>
      <option value="2592000" data-resolution="240">30 days, 4-hour bars</option>
    </select>
  </form>
  <p id="latest" aria-live="polite"></p>
</header>
<main>
  <div id="chart" role="img" aria-label="Candlestick chart (loading)"></div>
  <p id="status" role="status">Loading\u2026</p>
  <noscript><p>The chart needs JavaScript. The data is also at <a href="/prices">/prices</a> and <a href="/udf/config">/udf/</a>.</p></noscript>
</main>
</body>
</html>
`;

// src/adapters/http/udf-history.ts
var MINUTE = 6e4;
var DAY = 864e5;
var FIRST_MONDAY = 4 * DAY;
var UDF_RESOLUTIONS = Object.freeze({
  "1": { interval: MINUTE, origin: 0 },
  "5": { interval: 5 * MINUTE, origin: 0 },
  "15": { interval: 15 * MINUTE, origin: 0 },
  "30": { interval: 30 * MINUTE, origin: 0 },
  "60": { interval: 60 * MINUTE, origin: 0 },
  "240": { interval: 240 * MINUTE, origin: 0 },
  "1D": { interval: DAY, origin: 0 },
  "1W": { interval: 7 * DAY, origin: FIRST_MONDAY }
});
var GRIDS = new Map([...Object.entries(UDF_RESOLUTIONS), ["D", UDF_RESOLUTIONS["1D"]], ["W", UDF_RESOLUTIONS["1W"]]]);

// src/adapters/http/udf.ts
var ENDPOINTS = new Map(
  ["config", "symbols", "search", "history", "time"].map((name) => [`/udf/${name}`, name])
);
var SUPPORTED_RESOLUTIONS = Object.freeze(Object.keys(UDF_RESOLUTIONS));
var INTRADAY_MULTIPLIERS = Object.freeze(SUPPORTED_RESOLUTIONS.filter((resolution) => /^[0-9]+$/.test(resolution)));

// src/cli/config.ts
var DEFAULT_DB = "./data/prices";
var DEFAULT_PROVIDER = Object.freeze({
  name: "redstone",
  id: "I-5rWUehEv-MjdK9gFw09RxfSLQX9DIHxG614Wf8qo0",
  publicKey: "xyTvKiCST8bAT6sxrgkLh8UCX2N1eKvawODuxwq4qOHIdDAZFU_3N2m59rkZ0E7m77GsJuf1I8u0oEJEbxAdT7uD2JTwoYEHauXSxyJYvF0RCcZOhl5P1PJwImd44SJYa_9My7L84D5KXB9SKs8_VThe7ZyOb5HSGLNvMIK6A8IJ4Hr_tg9GYm65CRmtcu18S9mhun8vgw2wi7Gw6oR6mc4vU1I-hrU66Fi7YlXwFieP6YSy01JqoLPhU84EunPQzXPouVSbXjgRU5kFVxtdRy4GK2fzEBFYsQwCQgFrySCrFKHV8AInu9jerfof_DxNKiXkBzlB8nc22CrYnvvio_BWyh-gN0hQHZT0gwMR-A7sbXNCQJfReaIZzX_jP6XoB82PnpzmL_j1mJ2lnv2Rn001flBAx9AYxtGXd9s07pA-FggTbEG3Y2UnlWW6l3EJ93E0IfxL0PqGEUlp217mxUHvmTw9fkGDWa8rT9RPmsTyji-kMFSefclw80cBm_iOsIEutGP4S3LDbP-ZVJWDeJOBQQpSgwbisl8qbjl2sMQLQihoG2TQyNbmLwfyq-XSULkXjUi1_6BH36wnDBLWBKF-bS2bLKcGtn3Vjet72lNHxJJilcj8vpauwJG0078S_lO5uGt6oicdGR6eh_NSn6_8za_tXg0G_fohz4Yb1z8"
});
var STORE_OPTIONS_HELP = `Store options:
  --db PATH                   database directory (default ${DEFAULT_DB})
  --config FILE               JSON file: {"provider": {"name", "id", "publicKey", "aliases"}, "limits": {...}}
  --provider-name NAME        provider short name (default ${DEFAULT_PROVIDER.name})
  --provider-id ID            provider id, the "provider" field of every record
                              (default ${DEFAULT_PROVIDER.id})
  --provider-public-key KEY   provider public key, joined into every answer
                              (default: RedStone's published key for "redstone")
  --provider-alias NAME       another name the provider parameter accepts for this provider
                              (repeatable; e.g. redstone-rapid, which redstone-api's query builder sends)
  -h, --help                  show this help`;

// scratch/cpu.ts
var store = await PriceStore.open("/tmp/load-db-issue12", { provider: DEFAULT_PROVIDER });
var syms = await store.symbols();
var t0 = 1716940800993;
var span = 3 * 864e5;
var sel = 0;
var dec = 0;
var js = 0;
var n = 0;
var bytes = 0;
for (let i = 0; i < 30; i++) {
  const s = syms[i % 50];
  const from = Math.floor((t0 + Math.random() * (span - 1e8)) / 1e4) * 1e4;
  const plan = store.plan({ symbol: s, fromTimestamp: String(from), toTimestamp: String(from + 99999999), interval: "10000" });
  let t = performance.now();
  const ans = await store.runDeferred(plan);
  sel += performance.now() - t;
  t = performance.now();
  if (process.env.DECODE) for (let k = 0; k < ans.length; k++) ans.item(k);
  dec += performance.now() - t;
  t = performance.now();
  for (const p of answerJsonPieces(ans)) bytes += Buffer.byteLength(p);
  js += performance.now() - t;
  n += ans.length;
}
console.log(`per 10k records: select ${(sel / n * 1e4).toFixed(1)} ms, decode ${(dec / n * 1e4).toFixed(1)} ms, json+utf8 ${(js / n * 1e4).toFixed(1)} ms; ${(bytes / n).toFixed(0)} B/record`);
await store.close();
