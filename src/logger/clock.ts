// The clock behind :date, :response-time and :total-time.
//
// Dates: a busy server logs thousands of lines in the same second, and formatting a date is
// most of the cost of a `combined` line. The three formats are built once per second and reused;
// only the milliseconds of the ISO form change within a second.
//
// Timings use process.hrtime() pairs because custom tokens written for morgan read them from
// `req._startAt` and `res._startAt`; the arithmetic is morgan's, so the digits are identical.

import { isProxy } from 'node:util/types'
import { flattened } from './flat.js'

const CLF_MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

function pad2 (n: number): string {
  return n < 10 ? '0' + String(n) : String(n)
}

/** `date` in the common log format, always UTC: `10/Oct/2000:13:55:36 +0000`. */
export function formatClfDate (date: Date): string {
  // read in the order morgan reads them, for fakes that count or sequence their calls
  const day = date.getUTCDate()
  const hours = date.getUTCHours()
  const minutes = date.getUTCMinutes()
  const seconds = date.getUTCSeconds()
  const year = date.getUTCFullYear()
  const month = CLF_MONTHS[date.getUTCMonth()]
  return pad2(day) + '/' + String(month) + '/' + String(year) + ':' + pad2(hours) + ':' + pad2(minutes) + ':' + pad2(seconds) + ' +0000'
}

// The Date methods the texts are made with. The texts are kept for a second only while a date
// still has these, as they were when this module was loaded: a test that stubs one of them
// (`jest.spyOn(Date.prototype, 'toISOString')`), or replaces Date by a function making other
// objects, gets each line's date from its own methods, called as morgan calls them.
const DATE_METHODS = ['getTime', 'toISOString', 'toUTCString', 'getUTCDate', 'getUTCHours', 'getUTCMinutes',
  'getUTCSeconds', 'getUTCFullYear', 'getUTCMonth'] as const
const dateProto = Date.prototype as unknown as Record<string, unknown>
const nativeCode = /\{\s*\[native code\]\s*\}\s*$/
// Stubbed already when this module was loaded: never kept. A Proxy of a native function (as
// node:test's mock.method makes) and a bound one print as native code too.
const nativeAtLoad = DATE_METHODS.every((name) => {
  const method = dateProto[name]
  return typeof method === 'function' && !isProxy(method) && method.name === name && nativeCode.test(Function.prototype.toString.call(method))
})
const getTime = dateProto.getTime
const toISOString = dateProto.toISOString
const toUTCString = dateProto.toUTCString
const getUTCDate = dateProto.getUTCDate
const getUTCHours = dateProto.getUTCHours
const getUTCMinutes = dateProto.getUTCMinutes
const getUTCSeconds = dateProto.getUTCSeconds
const getUTCFullYear = dateProto.getUTCFullYear
const getUTCMonth = dateProto.getUTCMonth

/** Whether `date` makes its texts with the Date methods this module was loaded with. */
function nativeMethods (date: Date): boolean {
  return nativeAtLoad && date.getTime === getTime && date.toISOString === toISOString && date.toUTCString === toUTCString &&
    date.getUTCDate === getUTCDate && date.getUTCHours === getUTCHours && date.getUTCMinutes === getUTCMinutes &&
    date.getUTCSeconds === getUTCSeconds && date.getUTCFullYear === getUTCFullYear && date.getUTCMonth === getUTCMonth
}

let cachedSecond = Number.NaN
let clf = ''
let web = ''
let isoPrefix = ''
let isoAt = Number.NaN
let iso = ''

function refresh (date: Date, second: number): void {
  // From the line's own date (the texts have no milliseconds but the ISO form's, left out): no
  // other Date is made, so a fake Date that counts constructions counts as many as with morgan.
  clf = flattened(formatClfDate(date))
  web = date.toUTCString()
  // Everything up to and including the dot before the milliseconds; the year may be longer
  // than four digits, the tail `.mmmZ` never is.
  isoPrefix = date.toISOString().slice(0, -4)
  cachedSecond = second
}

/** The text of `date` made by its own methods, as morgan makes it. */
function dateText (date: Date, format: unknown): string | undefined {
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
  if (!nativeMethods(date)) return dateText(date, format)
  const now = date.getTime()
  // an invalid clock: the text of the invalid Date, as morgan prints it (its ISO form throws)
  if (Number.isNaN(now)) return dateText(date, format)
  const second = Math.floor(now / 1000)
  if (second !== cachedSecond) refresh(date, second)
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

/** A start time as morgan records it: `process.hrtime()` and a Date. */
export interface StartMark {
  _startAt?: [number, number] | undefined
  _startTime?: Date | undefined
}

/** Records the start time on `this`; shared by every request so no closure is made per request. */
export function recordStartTime (this: StartMark): void {
  // `process` is read at each call, as morgan reads it: fake timers that replace
  // `process.hrtime`, or the whole global `process`, are seen.
  this._startAt = process.hrtime()
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
  const elapsed = process.hrtime(start)
  const ms = elapsed[0] * 1e3 + elapsed[1] * 1e-6
  return fixed(ms, digits)
}
