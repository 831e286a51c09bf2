// The clock behind :date, :response-time and :total-time.
//
// Dates: a busy server logs thousands of lines in the same second, and formatting a date is
// most of the cost of a `combined` line. The three formats are built once per second and reused;
// only the milliseconds of the ISO form change within a second.
//
// Timings use process.hrtime() pairs because custom tokens written for morgan read them from
// `req._startAt` and `res._startAt`; the arithmetic is morgan's, so the digits are identical.

import { flattened } from './flat.js'

const CLF_MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

function pad2 (n: number): string {
  return n < 10 ? '0' + String(n) : String(n)
}

/** `date` in the common log format, always UTC: `10/Oct/2000:13:55:36 +0000`. */
export function formatClfDate (date: Date): string {
  return pad2(date.getUTCDate()) + '/' + String(CLF_MONTHS[date.getUTCMonth()]) + '/' + String(date.getUTCFullYear()) +
    ':' + pad2(date.getUTCHours()) + ':' + pad2(date.getUTCMinutes()) + ':' + pad2(date.getUTCSeconds()) + ' +0000'
}

let cachedSecond = Number.NaN
let clf = ''
let web = ''
let isoPrefix = ''
let isoAt = Number.NaN
let iso = ''

function refresh (second: number): void {
  const date = new Date(second * 1000)
  clf = flattened(formatClfDate(date))
  web = date.toUTCString()
  // Everything up to and including the dot before the milliseconds; the year may be longer
  // than four digits, the tail `.mmmZ` never is.
  isoPrefix = date.toISOString().slice(0, -4)
  cachedSecond = second
}

function invalidDate (date: Date, format: unknown): string | undefined {
  switch (format || 'web') {
    case 'clf': return formatClfDate(date)
    case 'web': return date.toUTCString()
    case 'iso': return date.toISOString()
    default: return undefined
  }
}

/**
 * The current time as `clf`, `iso` or `web` (the default for a missing or falsy argument, as
 * morgan's `format || 'web'`: a format function may pass `0` or `false`); undefined for any other
 * argument, which the log shows as `-`.
 */
export function currentDate (format: unknown): string | undefined {
  // The clock is read as morgan reads it, through `new Date()`: fake timers that replace only the
  // constructor, or only Date.now, give the same date as with morgan, and a fraction of a
  // millisecond is dropped as Date drops it.
  const date = new Date()
  const now = date.getTime()
  // an invalid clock: the text of the invalid Date, as morgan prints it (its ISO form throws)
  if (Number.isNaN(now)) return invalidDate(date, format)
  const second = Math.floor(now / 1000)
  if (second !== cachedSecond) refresh(second)
  switch (format || 'web') {
    case 'clf': return clf
    case 'web': return web
    case 'iso': {
      // made once per millisecond: a busy server logs several lines in each
      if (now !== isoAt) {
        const ms = now - second * 1000
        iso = flattened(isoPrefix + (ms < 10 ? '00' : ms < 100 ? '0' : '') + `${ms}` + 'Z')
        isoAt = now
      }
      return iso
    }
    default: return undefined
  }
}

// `process` is a getter on the global object: a global lookup and a call on every use. The object
// is kept; its `hrtime` is still read at each call, so fake timers that replace it are seen.
const proc = process

/** A start time as morgan records it: `process.hrtime()` and a Date. */
export interface StartMark {
  _startAt?: [number, number] | undefined
  _startTime?: Date | undefined
}

/** Records the start time on `this`; shared by every request so no closure is made per request. */
export function recordStartTime (this: StartMark): void {
  this._startAt = proc.hrtime()
  // Read from the clock each time, as morgan does: a change of the system clock, or fake timers
  // that replace Date, show in the very next request.
  this._startTime = new Date()
}

/**
 * `ms.toFixed(digits)`, `digits` defaulting to 3. The default is worked out here for the
 * durations requests take, with the same result: toFixed goes into V8's C++ runtime, about 450
 * instructions per call in-process (callgrind).
 */
export function fixed (ms: number, digits: unknown): string {
  if (digits === undefined && ms >= 0 && ms < 1e9) {
    // Below 1e9, ms * 1000 is within 2^-13 of the exact product. Away from a tie (a fraction of
    // one half, give or take 0.001), rounding it to the nearest integer rounds the exact product
    // the same way, as toFixed does; near a tie, toFixed decides.
    const scaled = ms * 1000
    const whole = Math.floor(scaled)
    const rest = scaled - whole
    if (rest < 0.499 || rest > 0.501) {
      const n = rest < 0.5 ? whole : whole + 1
      const integer = Math.floor(n / 1000)
      const thousandths = n - integer * 1000
      return `${integer}` + (thousandths < 10 ? '.00' : thousandths < 100 ? '.0' : '.') + `${thousandths}`
    }
  }
  return ms.toFixed(digits === undefined ? 3 : Number(digits))
}

/**
 * Milliseconds from `start` to `end` (both hrtime pairs) with `digits` decimals (default 3),
 * computed exactly as morgan does so the printed digits match.
 */
export function formatDuration (start: [number, number], end: [number, number], digits: unknown): string {
  const ms = (end[0] - start[0]) * 1e3 + (end[1] - start[1]) * 1e-6
  return fixed(ms, digits)
}

/** Milliseconds elapsed since `start`, as morgan's :total-time computes them. */
export function formatElapsed (start: [number, number], digits: unknown): string {
  const elapsed = proc.hrtime(start)
  const ms = elapsed[0] * 1e3 + elapsed[1] * 1e-6
  return fixed(ms, digits)
}
